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


class FastPathLike(Protocol):
    async def try_handle(self, text: str, language: str, ctx: ToolContext) -> DirectAnswer | None: ...


class DeterministicPath(FastPathLike, Protocol):
    """The fast path: it also finishes the command it asked "which one?" about."""

    async def finish(self, action: Any, entity: Entity, ctx: ToolContext) -> DirectAnswer | None: ...


class ConfirmationsLike(FastPathLike, Protocol):
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
