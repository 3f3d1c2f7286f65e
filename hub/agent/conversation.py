"""Conversations: history per conversation id, idle expiry and a token budget.

A conversation holds a few KiB (its turns' messages, trimmed to the token budget): 1.1 KiB for
a one-turn one, as the memory bench makes 340 of. Idle ones expire; besides, no more than
`MAX_CONVERSATIONS` are kept (the least recently used idle one goes first), so a client that
opens a new conversation every turn cannot grow the hub without bound before they expire.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass, field
from typing import Callable

from hub.core.tools import same_client

MAX_CONVERSATIONS = 2000
from hub.core.messages import Message
from hub.understanding.referents import Recent


@dataclass
class Conversation:
    id: str
    language: str
    messages: list[Message] = field(default_factory=list)
    persona: str | None = None  # the persona it started with: follow-ups that name none keep it
    recent: Recent | None = None  # its last command's targets and action ("turn it off")
    last_used: float = field(default_factory=time.monotonic)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)  # one turn at a time, in arrival order

    def turns(self) -> list[list[Message]]:
        """History split into turns; each starts at a user message and keeps calls with results."""
        turns: list[list[Message]] = []
        for message in self.messages:
            if message.role == "user" or not turns:
                turns.append([])
            turns[-1].append(message)
        return turns

    def trim(self, budget_tokens: int, count_tokens: Callable[[Message], int]) -> int:
        """Drop the oldest whole turns until the history fits the budget. Returns turns dropped.

        The latest turn is always kept, so a call is never separated from its result.
        """
        turns = self.turns()
        sizes = [sum(count_tokens(m) for m in turn) for turn in turns]
        dropped = 0
        while len(turns) - dropped > 1 and sum(sizes[dropped:]) > budget_tokens:
            dropped += 1
        if dropped:
            self.messages = [m for turn in turns[dropped:] for m in turn]
        return dropped


class ConversationStore:
    def __init__(self, idle_seconds: float, clock: Callable[[], float] = time.monotonic,
                 most: int = MAX_CONVERSATIONS) -> None:
        self._idle_seconds = idle_seconds
        self._most = most
        self._clock = clock
        self._conversations: dict[str, Conversation] = {}
        self._of_client: dict[str, str] = {}  # client → its latest conversation id

    def get(self, conversation_id: str) -> Conversation | None:
        self.expire()
        return self._conversations.get(conversation_id)

    def get_or_create(self, conversation_id: str | None, language: str) -> Conversation:
        self.expire()
        conversation_id = conversation_id or uuid.uuid4().hex
        conversation = self._conversations.get(conversation_id)
        if conversation is None:
            self._make_room()
            conversation = Conversation(conversation_id, language, last_used=self._clock())
            self._conversations[conversation_id] = conversation
        conversation.last_used = self._clock()
        return conversation

    def expire(self) -> None:
        now = self._clock()
        for cid in [c.id for c in self._conversations.values()
                    if now - c.last_used > self._idle_seconds and not c.lock.locked()]:
            del self._conversations[cid]

    def _make_room(self) -> None:
        """Drop the least recently used idle conversations while the store is full."""
        if len(self._conversations) < self._most:
            return
        idle = sorted((c for c in self._conversations.values() if not c.lock.locked()), key=lambda c: c.last_used)
        for conversation in idle[:len(self._conversations) - self._most + 1]:
            del self._conversations[conversation.id]

    def clear(self) -> None:
        self._conversations.clear()

    def remember_client(self, client: str, conversation_id: str) -> None:
        """`conversation_id` is the client's latest (clients of expired conversations are forgotten)."""
        for known in [c for c, cid in self._of_client.items() if cid not in self._conversations]:
            del self._of_client[known]
        self._of_client[same_client(client)] = conversation_id

    def latest_of(self, client: str | None) -> str | None:
        """The client's latest conversation id, if it is remembered."""
        return self._of_client.get(same_client(client)) if client is not None else None

    def ids(self) -> list[str]:
        return list(self._conversations)
