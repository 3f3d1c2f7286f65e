"""A request as a turn sees it before anything answers it: its text cleaned, the conversation it
continues (a client's, while that one waits for an answer), its persona and its candidate
languages — or why it cannot be a turn."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from dataclasses import dataclass
from typing import Callable

from hub.agent.choices import Choices
from hub.agent.conversation import Conversation, ConversationStore
from hub.agent.personas import Persona, PersonaBook, UnknownPersona
from hub.agent.ports import ConfirmationsLike, LanguageIdentifier
from hub.agent.types import TurnRequest, request_problem, without_format_characters
from hub.home.normalize import fold
from hub.locales import normalize_language
from hub.understanding.referents import Recent

_LOGGER = logging.getLogger(__name__)


@dataclass
class Intake:
    """A request taken in: `languages` most likely first (empty when `error` says why no turn)."""

    request: TurnRequest
    known: Conversation | None  # the conversation it continues, when the hub has it
    persona: Persona
    languages: list[str]
    error: str | None = None

    @property
    def language(self) -> str:
        return self.languages[0]


class Reception:
    def __init__(self, conversations: ConversationStore, personas: Callable[[], PersonaBook],
                 identify: LanguageIdentifier, choices: Choices, confirmations: ConfirmationsLike | None,
                 home_language: str, unnamed: Callable[[str], str] = lambda text: text) -> None:
        self._conversations = conversations
        self._unnamed = unnamed  # a text without the home's names (the fast path's)
        self._personas = personas
        self._identify = identify
        self._choices = choices
        self._confirmations = confirmations
        self._home_language = home_language
        self._loading: asyncio.Task[bool] | None = None  # language identification, from start()

    def start(self) -> None:
        self._loading = asyncio.create_task(self._identify.prepare())

    def stop(self) -> None:
        if self._loading is not None:
            self._loading.cancel()

    async def take(self, request: TurnRequest, stopping: bool = False) -> Intake:
        """The request taken in; an unknown persona or a text that cannot be a turn (empty,
        too long) is an `error`, as is any request while the hub is `stopping`."""
        if isinstance(request.text, str):
            request = dataclasses.replace(request, text=without_format_characters(request.text))
        error = request_problem(request.text)
        if request.conversation_id is None:
            request = dataclasses.replace(request, conversation_id=self._waiting_conversation(request.client))
        known = self.known(request)
        try:
            persona = self.persona_for(request, known)
        except UnknownPersona as err:
            _LOGGER.warning("%s", err)
            persona, error = self._personas().get(None), error or "unknown_persona"
        error = "stopping" if stopping else error
        languages = await self.languages(request, persona, known) if not error else [
            normalize_language(request.language or persona.language, default=self._home_language)]
        return Intake(request, known, persona, languages, error)

    def known(self, request: TurnRequest) -> Conversation | None:
        return self._conversations.get(request.conversation_id) if request.conversation_id else None

    def persona_for(self, request: TurnRequest, known: Conversation | None) -> Persona:
        """The persona the request names, else its conversation's, else the device's or the
        default (PersonaBook.choose). Raises UnknownPersona."""
        return self._personas().choose(request.persona or (known.persona if known else None),
                                       request.satellite_id, request.device_id)

    def preferred(self, persona: Persona, known: Conversation | None) -> str:
        """The language that breaks ties: the conversation's so far, else the persona's or the home's."""
        return known.language if known is not None else normalize_language(
            persona.language, default=self._home_language)

    def client_recent(self, client: str | None) -> Recent | None:
        """For a request that names no conversation (HA 2025.4 names none over Wyoming): the last
        command of the client's latest conversation, so that "turn it off" still refers to it."""
        latest = self._conversations.get(self._conversations.latest_of(client) or "")
        return latest.recent if latest is not None else None

    async def languages(self, request: TurnRequest, persona: Persona, known: Conversation | None) -> list[str]:
        """The request's candidate languages, most likely first: its text decides, the named
        language stands unless the text is plainly another; the conversation's language so far
        (else the persona's or the home's) breaks ties, so a short "ja" stays German. Identification
        still loading from start() is waited for at most its `ready_wait_s`; past that the
        script, the named and the preferred language are the candidates (their templates decide).
        The words besides the home's names add theirs: "Hallway Light an" is English by its names,
        German by the rest (issue #40: English names, other languages)."""
        if request.language is None and self._loading is not None and not self._identify.ready():
            await asyncio.wait([self._loading], timeout=self._identify.ready_wait_s)  # the load goes on
        preferred = self.preferred(persona, known)
        found = self._identify.candidates(request.text, request.language, preferred)
        rest = self._unnamed(request.text)
        if rest and rest != fold(request.text):
            found += [code for code in self._identify.candidates(rest, request.language, preferred) if code not in found]
        return found

    def _waiting_conversation(self, client: str | None) -> str | None:
        """For a request without a conversation id: the client's previous conversation while it
        waits for an answer (a yes or no, or "which one?", within the confirmation window), else
        None (a new one)."""
        previous = self._conversations.latest_of(client)
        return previous if previous is not None and self.awaiting(previous) else None

    def awaiting(self, conversation_id: str) -> str | None:
        """What the conversation waits for within the confirmation window: "choice" (the answer
        to "which one?"), "confirmation" (a yes or no), or None."""
        if self._choices.waiting(conversation_id):
            return "choice"
        if self._confirmations is not None and self._confirmations.waiting(conversation_id):
            return "confirmation"
        return None
