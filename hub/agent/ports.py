"""What the agent is handed: its options, the home view, the fast path, the confirmation hook.

Protocols: the composition root hands in the real ones (hub.home), tests stand in for each.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Collection, Protocol, Sequence

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
    reads). It holds the command it asked "which one?" about in a conversation: `unfinished`
    gives its options, `finish` carries it out on the chosen one."""

    async def try_handle(self, text: str, language: str, ctx: ToolContext,
                         read_names: bool = True) -> DirectAnswer | None: ...

    def unfinished(self, conversation_id: str) -> tuple[Entity, ...]: ...

    async def finish(self, entity: Entity, ctx: ToolContext) -> DirectAnswer | None: ...


class LanguageIdentifier(Protocol):
    """Which of the hub's languages a text may be in (hub.understanding.language.TextLanguages).
    Until `prepare` has loaded it, `candidates` has only the script, the named and the preferred
    language to go on; a turn waits at most `ready_wait_s` for it."""

    ready_wait_s: float

    def ready(self) -> bool: ...

    async def prepare(self) -> bool: ...

    def candidates(self, text: str, given: str | None, preferred: str | None) -> list[str]:
        """The languages `text` may be in, most likely first (never empty)."""
        ...

    def confidences(self, text: str) -> dict[str, float]:
        """Each language's share of the confidence that `text` is in it (empty: no idea)."""
        ...


class ActionReading(Protocol):
    """What a request's words say of an action, from its language's templates
    (hub.understanding.action_words.ActionWords)."""

    def said_intents(self, text: str, language: str, domain: str) -> frozenset[str]:
        """The directed intents (HassTurnOn, HassTurnOff, …) whose own words `text` says for a
        `domain` device."""
        ...

    def says_all(self, text: str, language: str) -> bool: ...

    def known_words(self, language: str) -> frozenset[str]:
        """The folded words the language's templates may say."""
        ...


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
