"""What the agent is handed: its options, the home view, the fast path, the confirmation hook,
where the speaker is.

Protocols: the composition root hands in the real ones (hub.home), tests stand in for each.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Collection, Protocol, Sequence

from hub.core.answer import DirectAnswer
from hub.core.tools import ToolContext
from hub.home.entities import Entity
from hub.home.places import Place
from hub.home.resolve import Fit, Match
from hub.understanding.referents import Recent


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

    async def finish(self, entities: Sequence[Entity], ctx: ToolContext) -> DirectAnswer | None: ...

    def unnamed(self, text: str) -> str:
        """The text without the home's names: the words that tell its language."""
        ...


class FollowUpPath(Protocol):
    """Follow-ups ("turn it off", "and the bedroom too") and relative commands ("a bit
    brighter", "it's too cold in here"), read by their own templates (hub.understanding.follow_ups):
    `try_handle` answers when they read the text (honestly when it refers to nothing), else None."""

    async def try_handle(self, text: str, language: str, ctx: ToolContext,
                         recent: Recent | None) -> DirectAnswer | None: ...

    def means_all(self, text: str, language: str) -> bool: ...


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

    def character_confidences(self, text: str) -> dict[str, float]:
        """The same from its letters alone, without the words the hub knows in each language."""
        ...


class SpeakerLocator(Protocol):
    """Where a request was spoken (hub.home.places.SpeakerPlaces): its area said outright, else
    its satellite's or device's area; None when it names no place the home knows."""

    def locate(self, *, satellite_id: str | None = None, device_id: str | None = None,
               area: str | None = None, language: str = "en") -> Place | None: ...


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

    def forget(self, conversation_id: str) -> None:
        """Drop what the conversation holds for a yes (a plan's run: nobody can answer there)."""
        ...


class HomeView(Protocol):
    """What the agent needs to know about the home to build prompts and narrow tool calls."""

    def entities(self) -> Sequence[Entity]: ...
    def name_of(self, entity_id: str) -> str | None: ...
    def match(self, text: str, language: str, place: Place | None = None) -> Match: ...
    def overview(self, entities: Sequence[Entity]) -> str: ...
    def live_states(self, entities: Sequence[Entity], best: Collection[str] | None = None) -> str: ...
    def fit(self, text: str, language: str, match: Match) -> Fit: ...
    def pick(self, answer: str, among: list[Entity], language: str) -> Entity | None: ...
