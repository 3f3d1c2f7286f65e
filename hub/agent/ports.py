"""What the agent is handed: its options, the home view, the fast path, the confirmation hook.

Protocols: the composition root hands in the real ones (hub.home), tests stand in for each.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Collection, Protocol, Sequence

from hub.core.answer import DirectAnswer
from hub.core.tools import ToolContext
from hub.home.entities import Entity
from hub.home.resolve import Fit, Match


@dataclass(frozen=True)
class AgentOptions:
    language: str
    turn_timeout: int
    max_tokens: int
    temperature: float
    max_reply_chars: int
    max_tool_rounds: int
    history_tokens: int
    conversation_idle_minutes: int
    confirm_seconds: int
    fast_path: bool
    model_home_control: bool


class DeterministicPath(Protocol):
    """The fast path. `read_names=False`: strict template matches only (no name the resolver
    reads); `finish`: the command it asked "which one?" about, on the chosen entity."""

    async def try_handle(self, text: str, language: str, ctx: ToolContext,
                         read_names: bool = True) -> DirectAnswer | None: ...

    async def finish(self, action: Any, entity: Entity, ctx: ToolContext) -> DirectAnswer | None: ...


class ConfirmationsLike(Protocol):
    async def try_handle(self, text: str, language: str, ctx: ToolContext) -> DirectAnswer | None: ...

    def waiting(self, conversation_id: str) -> bool: ...


class HomeView(Protocol):
    """What the agent needs to know about the home to build prompts and narrow tool calls."""

    def entities(self) -> Sequence[Entity]: ...
    def name_of(self, entity_id: str) -> str | None: ...
    def match(self, text: str, language: str) -> Match: ...
    def overview(self, entities: Sequence[Entity]) -> str: ...
    def live_states(self, entities: Sequence[Entity], best: Collection[str] | None = None) -> str: ...
    def fit(self, text: str, language: str, match: Match) -> Fit: ...
    def pick(self, answer: str, among: list[Entity], language: str) -> Entity | None: ...
