"""Admission by deadline in the real engine's queue (hub.llm.admission), with Gemma 3 270M: a
request that cannot be done in time behind a running generation is refused at once, one that
waits leaves (busy) before its deadline, and a request that finds the model free always starts;
requests asking at once share the queue across interfaces."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import AsyncIterator

import pytest

from hub.llm.admission import CUT_S, GRACE_S, FairAdmission, QueueEstimate, RunningGeneration
from hub.llm.llama_engine import LlamaEngine
from hub.core.messages import Message
from hub.llm.types import Delta, Done, EngineBusy, GenerationRequest

pytestmark = pytest.mark.slow

COUNTING = "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,"  # the base model goes on counting


def counting(max_tokens: int, deadline: float | None = None) -> GenerationRequest:
    return GenerationRequest([Message("user", COUNTING)], max_tokens=max_tokens, deadline=deadline)


async def collect(stream: AsyncIterator[Delta]) -> list[Delta]:
    return [delta async for delta in stream]


def test_the_estimate_follows_recent_durations_and_counts_what_is_ahead() -> None:
    estimate = QueueEstimate()
    assert estimate.fits(100, 0.001)  # nothing measured yet: everything fits...
    # ...unless the running one already took long
    assert not estimate.fits(1, 10.0, RunningGeneration(time.monotonic() - 6.0, None))
    for seconds in (2.0, 2.0, 2.0, 2.0):
        estimate.record(seconds)
    assert 1.9 < estimate.mean_s <= 2.0 and estimate.deviation_s < 0.5
    assert estimate.fits(0, 3.0) and not estimate.fits(0, 1.5)
    assert estimate.fits(2, 7.0) and not estimate.fits(3, 7.0)
    for _ in range(6):  # generations got slower: the estimate follows
        estimate.record(6.0)
    assert not estimate.fits(1, 7.0)
    assert not estimate.fits(0, -1.0)  # a deadline that has passed


def test_a_running_generation_that_overran_counts_as_holding_the_model_to_its_deadline() -> None:
    estimate = QueueEstimate()
    for _ in range(4):
        estimate.record(1.0)
    now = time.monotonic()
    usual = RunningGeneration(now - 0.5, now + 29.5)  # as long as generations take: its mean counts
    assert estimate.fits(1, 3.0, usual)
    overran = RunningGeneration(now - 5.0, now + 25.0)  # an OpenAI client's long completion
    assert not estimate.fits(1, 20.0, overran) and not estimate.fits(0, 20.0, overran)
    assert estimate.fits(1, 25.0 + CUT_S + 1.5, overran)  # it could wait for the cut at its deadline
    assert not estimate.fits(0, 1000.0, RunningGeneration(now - 5.0, None))  # no deadline: no telling


async def test_requests_asking_at_once_share_the_queue_across_interfaces() -> None:
    """Six REST asks that arrived a moment before six MQTT asks, with room for four: two each,
    and every refusal at once (the decision comes GRACE_S after the first of them asked)."""
    admission = FairAdmission()
    room = 4
    asked = time.monotonic()

    async def ask(source: str) -> tuple[str, bool, float]:
        admitted = await admission.admitted(source, asked + 30, False, lambda ahead, left: ahead < room)
        return source, admitted, time.monotonic() - asked

    rest = [asyncio.ensure_future(ask("rest")) for _ in range(6)]
    await asyncio.sleep(GRACE_S / 5)
    decided = await asyncio.gather(*rest, *(ask("mqtt") for _ in range(6)))
    assert [source for source, admitted, _ in decided if admitted] == ["rest", "rest", "mqtt", "mqtt"]
    assert all(took < GRACE_S + 0.2 for _, _, took in decided)
    assert await admission.admitted("rest", None, True, lambda ahead, left: False)  # the model is free: it starts


async def test_admission_refuses_at_once_leaves_before_the_deadline_and_starts_when_free(gemma_path: Path) -> None:
    engine = LlamaEngine(gemma_path, n_ctx=1024, threads=1, seed=5)
    try:
        done = await collect(engine.stream(counting(8)))
        assert isinstance(done[-1], Done)
        await engine.wait_idle()  # its time is recorded as the model is released
        mean, spread = engine.queue.mean_s, 2 * engine.queue.deviation_s
        assert mean > 0

        running = engine.stream(counting(2000))  # holds the model for minutes
        await running.__anext__()

        started = time.monotonic()
        with pytest.raises(EngineBusy):  # it could not even start before its deadline
            await collect(engine.stream(counting(8, deadline=started + mean)))
        assert time.monotonic() - started < GRACE_S + 0.2, "not refused at once"

        # room for the one ahead and itself at arrival: admitted, waits, and leaves once an
        # immediate start would no longer be done in time, before its deadline
        room = 2 * mean + spread + 1.0
        started = time.monotonic()
        with pytest.raises(EngineBusy):
            await asyncio.wait_for(collect(engine.stream(counting(8, deadline=started + room))), room + 30)
        assert time.monotonic() - started < room, "it waited past its deadline"

        await running.aclose()
        await engine.wait_idle()
        mean, spread = engine.queue.mean_s, 2 * engine.queue.deviation_s  # the cut one counts too

        # behind a generation that took longer than generations do and may go on to its deadline
        # (60 s), a request with 10 s is refused at once, and one admitted before it overran
        # leaves when it does, not after waiting most of its time (issue #30 item 6)
        running = engine.stream(counting(3000, deadline=time.monotonic() + 60))
        await running.__anext__()
        started = time.monotonic()
        waiting = asyncio.ensure_future(collect(engine.stream(counting(8, deadline=started + 20))))
        while time.monotonic() - started <= mean + spread:
            await asyncio.sleep(0.05)
        refused = time.monotonic()
        with pytest.raises(EngineBusy):
            await collect(engine.stream(counting(8, deadline=refused + 10)))
        assert time.monotonic() - refused < GRACE_S + 0.2, "not refused at once"
        with pytest.raises(EngineBusy):
            await asyncio.wait_for(waiting, 30)
        assert time.monotonic() - started < mean + spread + 1.0, "it waited on behind the overrun"

        # a request that arrives as the overrunning generation's client leaves (the hub notices a
        # poll later) is not refused for it: the model is free within the grace
        arriving = asyncio.ensure_future(collect(engine.stream(counting(4, deadline=time.monotonic() + 10))))
        await asyncio.sleep(GRACE_S / 3)
        await running.aclose()
        done = await asyncio.wait_for(arriving, 60)
        assert isinstance(done[-1], Done)
        # the model is free: a request starts now, however short its deadline looks
        done = await asyncio.wait_for(collect(engine.stream(counting(4, deadline=time.monotonic() + 0.01))), 60)
        assert isinstance(done[-1], Done)
    finally:
        await engine.close()
