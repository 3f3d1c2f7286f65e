"""The real agent over a real engine and a real home, with each generation's request and usage
recorded (for the perf tests and benches)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, AsyncIterator, Callable, Sequence

import numpy as np

from hub.agent.agent import Agent
from hub.config import validate
from hub.options import hub_options
from hub.agent.prompt import stable_system_message
from hub.home.catalogue import build_home_tools
from hub.home.context import OVERVIEW_MAX_ENTITIES
from hub.backends.demo.home import DemoBackend, load_demo_home
from hub.home.entities import EntityStore
from hub.understanding.fast_path import FastPath
from hub.home.resolve import EntityResolver
from hub.core.tools import ToolRegistry
from hub.home.view import StoreHomeView
from hub.llm.kv_cache import SavedState
from hub.llm.types import Delta, Done, Engine, GenerationRequest, Reasoning, Usage
from hub.settings import RuntimeSettings
from tests.home.generated_home import generated_entities

CLOCK = "Monday 2026-11-30 08:00"


@dataclass
class Generation:
    request: GenerationRequest
    usage: Usage


@dataclass
class RecordingEngine:
    """Passes everything to `engine`; keeps each finished generation's request and usage."""

    engine: Any
    generations: list[Generation] = field(default_factory=list)
    priming: bool = True  # False: the agent sees an engine without `prime` (no background priming)
    # True: each generation stops after its first token (benches that measure only the first token;
    # the prompt, and so the first token's time, do not depend on max_tokens)
    first_token_only: bool = False

    @property
    def info(self):  # type: ignore[no-untyped-def]
        return self.engine.info

    @property
    def uses_constrained_tools(self) -> bool:
        return self.engine.uses_constrained_tools

    def count_tokens(self, text: str) -> int:
        return self.engine.count_tokens(text)

    @property
    def prime(self):  # type: ignore[no-untyped-def]
        if not self.priming:
            raise AttributeError("prime")
        return self.engine.prime

    async def wait_idle(self) -> None:
        await self.engine.wait_idle()

    async def stream(self, request: GenerationRequest) -> AsyncIterator[Delta]:
        if self.first_token_only:
            request = replace(request, max_tokens=1)
        async for delta in self.engine.stream(request):
            if isinstance(delta, Done):
                self.generations.append(Generation(request, delta.usage))
            yield delta

    async def close(self) -> None:
        await self.engine.close()

    def take(self) -> list[Generation]:
        taken, self.generations = self.generations, []
        return taken


async def make_cold(engine: RecordingEngine) -> None:
    """Forget every cached token (benches and tests only: reaches into the engine, in its worker)."""
    def forget(llm: Any) -> None:
        engine.engine._prompt_cache.clear()
        llm.reset()

    await engine.engine.exclusive(forget)


def saved_state(engine: RecordingEngine, tokens: Sequence[int]) -> SavedState:
    """The prompt cache's saved state of exactly `tokens` (benches and tests only; the engine idle)."""
    wanted = np.asarray(tokens, dtype=np.intc)
    return next(s for s in engine.engine._prompt_cache.states if np.array_equal(s.tokens, wanted))


async def restore_only(engine: RecordingEngine, state: SavedState) -> None:
    """Forget every cached token, then load `state` (e.g. saved right after priming) into the KV
    cache: what a turn finds right after priming, without evaluating the prefix again (benches
    and tests only: reaches into the engine, in its worker)."""
    def forget(llm: Any) -> None:
        cache = engine.engine._prompt_cache
        cache.clear()
        llm.reset()
        cache.add(state.tokens, state.data)
        if cache.restore_best(state.tokens) != len(state.tokens):
            raise RuntimeError("the saved state could not be restored")

    await engine.engine.exclusive(forget)


def generated_store(count: int) -> EntityStore:
    store = EntityStore()
    store.register_backend("generated", DemoBackend(store))
    for entity in generated_entities(count):
        store.upsert(replace(entity, source="generated"))
    return store


def demo_store() -> EntityStore:
    store = EntityStore()
    load_demo_home(store)
    return store


def build_agent(
    engine: Engine, store: EntityStore, *, overview_max_entities: int = OVERVIEW_MAX_ENTITIES,
    fast_path: FastPath | None = None, clock_text: Callable[[], str] = lambda: CLOCK, **options: Any,
) -> tuple[Agent, StoreHomeView, ToolRegistry]:
    # the small test models are let act (model_home_control), so the grammar-bound path runs
    config = validate({"fast_path": fast_path is not None, "max_tokens": 48, "temperature": 0.0,
                       "turn_timeout": 600, "model_home_control": True, **options})
    resolver = EntityResolver(store)
    registry = ToolRegistry()
    for tool in build_home_tools(store, resolver):
        registry.register(tool)
    view = StoreHomeView(store, resolver, overview_max_entities=overview_max_entities)
    agent = Agent(engine=engine, registry=registry, settings=RuntimeSettings(hub_options(config).settings), options=hub_options(config).agent,
                  home=view, fast_path=fast_path, clock_text=clock_text)
    return agent, view, registry


def stable_request(view: StoreHomeView, registry: ToolRegistry) -> GenerationRequest:
    """What the agent's turns start with under the default settings (for priming)."""
    return GenerationRequest([stable_system_message(view, True)], tools=registry.specs(registry.offered()),
                             reasoning=Reasoning(), conversational=True)
