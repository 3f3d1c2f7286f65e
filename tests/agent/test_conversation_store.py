"""The conversation store is bounded (issue #30): idle conversations expire, and no more than
its limit are kept, the least recently used idle one dropped first; a running turn's stays."""

from __future__ import annotations

import asyncio

from hub.agent.conversation import ConversationStore


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_a_full_store_drops_the_least_recently_used_idle_conversation() -> None:
    clock = Clock()
    store = ConversationStore(idle_seconds=3600, clock=clock, most=3)
    for name in ("a", "b", "c"):
        clock.now += 1
        store.get_or_create(name, "en")
    clock.now += 1
    store.get_or_create("a", "en")  # used again: "b" is now the oldest
    busy = store.get("b")
    assert busy is not None
    async with busy.lock:  # a turn runs in it: it stays
        store.get_or_create("d", "en")
    assert sorted(store.ids()) == ["a", "b", "d"]
    store.get_or_create("e", "en")
    assert sorted(store.ids()) == ["a", "d", "e"]


async def test_a_flood_of_new_conversations_stays_within_the_limit() -> None:
    store = ConversationStore(idle_seconds=3600, most=50)
    for number in range(500):
        store.get_or_create(f"flood-{number}", "en")
        await asyncio.sleep(0)
    assert len(store.ids()) == 50 and "flood-499" in store.ids()
