"""A hub as the composition root would build it (demo home, policy, async tools, agent), for tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from hub.agent.agent import Agent
from hub.home.later import Later
from hub.agent.pending import ConfirmationHook
from hub.agent.types import TurnRequest, TurnResult
from hub.config import HubConfig, validate
from hub.options import hub_options
from hub.home.catalogue import build_home_tools
from hub.backends.demo.home import DemoBackend, load_demo_home
from hub.home.entities import EntityStore
from hub.understanding.fast_path import FastPath
from hub.understanding.follow_ups import FollowUps
from hub.home.places import SpeakerPlaces
from hub.home.policy import ActionPolicy
from hub.home.resolve import EntityResolver
from hub.core.tools import Tool, ToolRegistry
from hub.home.view import StoreHomeView
from hub.llm.types import Engine, GenerationRequest
from hub.settings import RuntimeSettings


class FakeClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class TestHub:
    """Demo home + policy + async tools + agent, wired like hub/app.py should wire them."""

    __test__ = False

    def __init__(self, tmp_path: Path, engine: Engine, *, demo_home: bool = True,
                 store: EntityStore | None = None, policy_clock: Any = None, tools: Sequence[Tool] = (),
                 **options: Any) -> None:
        self.config: HubConfig = validate({"fast_path": False, "data_dir": str(tmp_path), **options})
        self.options = hub_options(self.config)
        self.store = store or EntityStore()
        self.backend: DemoBackend | None = load_demo_home(self.store) if demo_home else None
        self.resolver = EntityResolver(self.store)
        kwargs = {"clock": policy_clock} if policy_clock is not None else {}
        self.policy = ActionPolicy.from_options(self.options.policy, **kwargs)
        self.later = Later(self.options.later, self.store)
        self.registry = ToolRegistry()
        for tool in [*build_home_tools(self.store, self.resolver, self.policy, self.later.tracker),
                     *self.later.tools(), *tools]:
            self.registry.register(tool)
        self.fast_path = FastPath(self.store, self.registry, self.resolver) if self.options.agent.fast_path else None
        self.agent = Agent(
            engine=engine, registry=self.registry, settings=RuntimeSettings(self.options.settings),
            options=self.options.agent,
            home=StoreHomeView(self.store, self.resolver), fast_path=self.fast_path,
            confirmations=ConfirmationHook(self.policy, self.registry),
            follow_ups=FollowUps(self.store, self.resolver, self.fast_path) if self.fast_path else None,
            places=SpeakerPlaces(self.store, self.resolver),
            clock_text=lambda: "Monday 2026-11-30 08:00",
        )
        self.later.reporter.connect_agent(self.agent)

    async def start(self) -> None:
        await self.later.start()

    async def stop(self) -> None:
        await self.later.stop()

    async def ask(self, text: str, conversation_id: str = "c1", language: str = "en", **fields: Any) -> TurnResult:
        return await self.agent.ask(TurnRequest(text, conversation_id=conversation_id, language=language, **fields))

    def state(self, entity_id: str) -> str:
        return self.store.get(entity_id).state

    def calls_to(self, entity_id: str) -> list[tuple[str, str, dict]]:
        assert self.backend is not None
        return [c for c in self.backend.calls if c[0] == entity_id]


def prompt_text(request: GenerationRequest) -> str:
    return "\n".join(m.content for m in request.messages)
