"""What the servers (`hub.interfaces`) use of the agent, one face for all of them; `Agent` is one,
test stand-ins may be."""

from __future__ import annotations

from typing import Any, AsyncGenerator, Callable, Protocol

from hub.agent.activity import Observer
from hub.agent.conversation import ConversationStore
from hub.agent.personas import PersonaBook
from hub.agent.plans import PlanRun, TurnPlan
from hub.agent.types import TurnEvent, TurnRequest, TurnResult
from hub.core.tools import ToolContext, ToolResult


class AgentApi(Protocol):
    languages: list[str]
    personas: PersonaBook
    conversations: ConversationStore

    def run(self, request: TurnRequest) -> AsyncGenerator[TurnEvent, None]: ...

    def prepare(self, request: TurnRequest) -> None:
        """A turn for `request` is coming whose words are not known yet (a voice turn while its
        audio is transcribed): the model may evaluate its prompt's start meanwhile."""
        ...

    async def ask(self, request: TurnRequest) -> TurnResult: ...

    async def plan(self, request: TurnRequest) -> TurnPlan: ...

    async def run_plan(self, plan_id: str, client: str | None = None) -> PlanRun: ...

    def greet(self, persona_key: str | None, conversation_id: str | None = None) -> TurnResult: ...

    async def call_tool(self, name: str, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult: ...

    async def report(self, conversation_id: str, text: str) -> None: ...

    def clear_conversations(self) -> None: ...

    def add_observer(self, observer: Observer) -> Callable[[], None]: ...
