"""Keeps the model's prompts warm for the agent: every persona's stable prefix (a `PrefixPrimer`
each), a conversation's continuation after its turn, the start of a voice turn whose words are
still being transcribed. Background priming a turn interrupts; switching engines primes the new
one's prefix before it answers."""

from __future__ import annotations

import asyncio
import functools
from typing import Callable

from hub.agent.personas import Persona, PersonaBook
from hub.agent.prefix_primer import PrefixPrimer
from hub.core.messages import Message
from hub.llm.types import Engine, GenerationRequest

StableRequest = Callable[[Persona], GenerationRequest]  # what every turn of a persona starts with


class Priming:
    def __init__(self, engine: Engine, stable_request: StableRequest, personas: Callable[[], PersonaBook]) -> None:
        self._engine = engine
        self._stable_request = stable_request
        self._personas = personas
        self.primer = PrefixPrimer(engine, self._default_request)  # the default persona's prefix
        self.persona_primers: list[PrefixPrimer] = []  # the other personas' (from start())
        self._background: set[asyncio.Task[bool]] = set()

    @property
    def supported(self) -> bool:
        """Whether the engine primes at all (remote servers keep their own prompt caches)."""
        return self.primer.supported

    async def start(self) -> None:
        """Prime every persona's stable prefix while idle, and again whenever it changes."""
        self.persona_primers = [PrefixPrimer(self._engine, functools.partial(self._stable_request, persona),
                                             name=f"persona:{persona.key}")
                                for persona in self._personas().all() if persona.key != self._personas().default]
        for primer in (self.primer, *self.persona_primers):
            await primer.start()

    async def switch(self, engine: Engine, stable_request: StableRequest) -> None:
        """Prime `engine`'s default prefix now (the old engine still answers meanwhile), then keep
        its prefixes warm instead of the old one's."""
        primer = PrefixPrimer(engine, lambda: stable_request(self._personas().get(None)))
        if primer.supported:
            await primer.prime_now()
        await self._stop_primers()
        self._engine, self._stable_request, self.primer = engine, stable_request, primer
        await self.start()

    def continuation(self, messages: list[Message], persona: Persona) -> None:
        """Evaluate `messages` after the persona's stable prefix, in the background."""
        if not self.supported:
            return
        task = asyncio.create_task(self.primer.prime_continuation(messages, self._stable_request(persona)))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def wait(self) -> None:
        """Wait until the background priming has finished (tests, benches)."""
        while self._background:
            await asyncio.gather(*self._background, return_exceptions=True)

    async def stop(self) -> None:
        await self._stop_primers()
        for task in list(self._background):
            task.cancel()

    def _default_request(self) -> GenerationRequest:
        return self._stable_request(self._personas().get(None))

    async def _stop_primers(self) -> None:
        for primer in (self.primer, *self.persona_primers):
            await primer.stop()
