"""Keeps the prompt's stable start evaluated ahead of the next turn.

When what every turn starts with changes (the entity list after a Home Assistant registry reload
or new MQTT devices, conversational mode, reasoning), the first turn after it would pay for the
whole new prefix: thousands of tokens, seconds on a CPU. The primer notices the change, waits
until it settles, and lets the engine evaluate the new prefix while it is idle (`prime`); a turn
that arrives meanwhile interrupts it and reuses what was evaluated. The engine keeps each
primer's state on disk under the primer's `name` (one per persona), so after a restart the
prefix is warm before it is primed again. Engines without `prime` (remote servers keep their own
prompt caches) are left alone.

After a turn, `prime_continuation(history)` does the same for that conversation: the tool
results and the reply are evaluated while the user is listening, and the prompt cache keeps the
state, so the conversation's next turn only pays for its new message, whatever ran in between.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from dataclasses import replace
from typing import Callable, Sequence

from hub.core.messages import Message
from hub.llm.types import EngineError, GenerationRequest

_LOGGER = logging.getLogger(__name__)


class PrefixPrimer:
    """Component (start/stop). `stable_request()` builds what every turn starts with; `name`
    tells this prefix apart from the other primers' (the engine keeps one state per name)."""

    def __init__(
        self, engine: object, stable_request: Callable[[], GenerationRequest], *,
        poll_s: float = 1.0, settle_s: float = 2.0, name: str = "default",
    ) -> None:
        self._engine = engine
        self._stable_request = stable_request
        self.name = name
        self._poll_s = poll_s
        self._settle_s = settle_s
        self._task: asyncio.Task[None] | None = None
        self.primed_key: str | None = None  # the stable request last primed
        self.primes = 0

    @property
    def supported(self) -> bool:
        return callable(getattr(self._engine, "prime", None))

    async def start(self) -> None:
        if self.supported and self._task is None:
            self._task = asyncio.create_task(self._watch(), name="prefix-primer")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None

    async def prime_now(self) -> bool:
        """Prime the current stable request; False when the engine was busy (try again later)."""
        request = self._stable_request()
        key = request_key(request)
        started = time.monotonic()
        if not await self._engine.prime(request, keep_as=self.name):  # type: ignore[attr-defined]
            return False
        self.primed_key = key
        self.primes += 1
        _LOGGER.info("primed the stable prompt prefix in %.2f s", time.monotonic() - started)
        return True

    async def prime_continuation(self, history: Sequence[Message], stable: GenerationRequest | None = None) -> bool:
        """Evaluate a conversation's history after the stable start (default: the primer's own;
        a persona's conversation passes its persona's), once the engine is idle."""
        if not self.supported or not history:
            return False
        wait_idle = getattr(self._engine, "wait_idle", None)
        if wait_idle is not None:
            await wait_idle()  # the turn's own generation may still be saving its state
        stable = stable or self._stable_request()
        try:
            primed: bool = await self._engine.prime(  # type: ignore[attr-defined]
                replace(stable, messages=[*stable.messages, *history]))
            return primed
        except EngineError as err:  # e.g. a history longer than the context: the turn will say so
            _LOGGER.debug("could not prime a conversation: %s", err)
            return False

    async def _watch(self) -> None:
        seen, changed_at = None, time.monotonic()
        while True:
            key = request_key(self._stable_request())
            if key != seen:
                seen, changed_at = key, time.monotonic()
            elif key != self.primed_key and time.monotonic() - changed_at >= self._settle_s:
                try:
                    await self.prime_now()
                except EngineError as err:  # not worth retrying every second
                    _LOGGER.warning("could not prime the prompt prefix: %s", err)
                    self.primed_key = key
            await asyncio.sleep(self._poll_s)


def request_key(request: GenerationRequest) -> str:
    """A digest of everything that shapes the stable prefix."""
    payload = {
        "messages": [(m.role, m.content) for m in request.messages],
        "tools": [(t.name, t.description, t.parameters) for t in request.tools],
        "reasoning": (request.reasoning.mode.value, request.reasoning.budget),
        "conversational": request.conversational,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()
