"""What a stand-in model (under the small-model size) is never handed, and the hub's own words
instead:

- "what can you do?", "who are you?" (in 35 languages): the hub's own answer (`OwnQuestions`,
  before the fast path);
- after every other direct route, so that whatever the hub can read (the fast path's answers)
  is answered from the home first (`StandInLimits`): a request about the weather, a calendar or
  a list, in any form, and a question of fact about the home or the world — a state, the time,
  a quantity (`hub/locales/topics`, the 8 main languages; English and the phrases' question
  words in the others): what the hub cannot read is said plainly ("There is no weather service
  in this home." in a home without one), never made up by a model that would invent it; and a
  command the hub cannot carry out here ("read my emails", "call Liza", "order a pizza"): "I
  can't do that here", and what it can do, never a stand-in that would pretend it did.

Chit-chat (jokes, stories, "how are you?", "do you like music?", general questions) still goes
to the stand-in, whose reply is spoken only as far as it passes the judge (`stand_in_judge`,
`hub.agent.judged_release`), else `fallback`.
"""

from __future__ import annotations

from typing import Callable, Iterable

from hub.agent.judge import ReplyJudge
from hub.agent.ports import HomeView, LanguageIdentifier
from hub.agent.prompt_echo import PromptEcho
from hub.agent.turn import TurnState
from hub.agent.utterances import is_question
from hub.core.answer import DirectAnswer
from hub.home.device_text import example_name
from hub.home.entities import Entity
from hub.home.vocabulary import speaks_of_home
from hub.locales import UNSPACED_LANGUAGES, normalize_language, phrase
from hub.locales.word_tables import first_said, table_words, tokens

_TOPICS = "topics"
_OWN_QUESTION_EXTRA_WORDS = 3  # "what can you do for me today": a question to the hub still
# topics asked about in any form ("weather tomorrow"), each with the domain that would answer it
_ANY_FORM = (("weather", "weather", "missing.weather"), ("calendar", "calendar", "missing.calendar"),
             ("lists", "todo", "missing.list"))
_FACTS = ("time", "quantity", "device")  # what a question of fact asks about, besides names
_NO_SPACE = frozenset({"ja", "zh"})
_QUESTION_MARKS = ("?", "？", "؟")


class _ForStandIns:
    """A direct route of the home persona's turns while a stand-in answers."""

    path = "resolution"

    def __init__(self, home: HomeView | None, stand_in: Callable[[], bool]) -> None:
        self._home = home
        self._stand_in = stand_in  # whether the model now answering is a stand-in

    async def try_answer(self, state: TurnState) -> DirectAnswer | None:
        if not state.persona.home or not self._stand_in():
            return None
        reply = self.reply(state.text, state.language)
        return DirectAnswer(reply, "hub_answer") if reply is not None else None

    def _entities(self) -> list[Entity]:
        return list(self._home.entities()) if self._home is not None else []

    def reply(self, text: str, language: str) -> str | None:
        raise NotImplementedError


class OwnQuestions(_ForStandIns):
    """ "What can you do?", "who are you?": tried before the fast path, whose templates would
    read "was kannst du" as a device called "was"."""

    def reply(self, text: str, language: str) -> str | None:
        if _asks_itself(text, language, "capability"):
            return can_do(language, example_name((), self._entities()))
        if _asks_itself(text, language, "identity"):
            return _joined(language, phrase(language, "self.identity"), can_do(language, None))
        return None


class StandInLimits(_ForStandIns):
    """What a stand-in must not be handed, tried after every other direct route."""

    def reply(self, text: str, language: str) -> str | None:
        """The hub's own answer to `text`, or None: the stand-in may chat."""
        domains = {e.domain for e in self._entities()}
        for topic, domain, missing in _ANY_FORM:
            if first_said(text, table_words(_TOPICS, language, topic), language):
                return phrase(language, missing if domain not in domains else "self.cannot_read")
        if asks_a_fact(text, language, self._names_a_device):
            return phrase(language, "self.cannot_read")
        if not is_question(text, language) and first_said(text, table_words(_TOPICS, language, "outside"), language):
            return _joined(language, phrase(language, "self.cannot_do"), can_do(language, None))
        return None

    def _names_a_device(self, text: str, language: str) -> bool:
        return self._home is not None and bool(self._home.match(text, language).best)


def asks_a_fact(text: str, language: str, names_a_device: Callable[[str, str], bool] | None = None) -> bool:
    """Whether `text` is a question of fact about the home or the world, as issue 39 lists them:
    a state (it names a device, a kind of device or a room: `names_a_device`, `speaks_of_home`),
    the time, a quantity; not one to the assistant itself ("how are you?", "do you like music?";
    "do you know if the lamp is on?" asks about the lamp). Other questions ("who wrote Hamlet?")
    are chit-chat, judged like any."""
    prefix = first_said(text, table_words(_TOPICS, language, "info_prefix"), language)
    rest = " ".join(tokens(text)[len(tokens(prefix)):]) if prefix and _starts(text, prefix) else text
    asked = text.rstrip(" .!")[-1:] in _QUESTION_MARKS or is_question(rest, language) \
        or any(_starts(rest, w) for w in table_words(_TOPICS, language, "question"))
    if not asked:  # "tell me a joke"
        return False
    # "comment vas-tu": the pronoun after its verb's hyphen is a word of its own
    if first_said(rest.replace("-", " "), table_words(_TOPICS, language, "about_you"), language) is not None:
        return False
    return any(first_said(rest, table_words(_TOPICS, language, topic), language) for topic in _FACTS) \
        or speaks_of_home(rest, language) or (names_a_device is not None and names_a_device(rest, language))


def _starts(text: str, prefix: str) -> bool:
    return " ".join(tokens(text)).startswith(" ".join(tokens(prefix)))


def _asks_itself(text: str, language: str, topic: str) -> bool:
    """Whether `text` is a question to the hub about itself (`topic`: capability, identity),
    not a longer request that happens to hold its words."""
    said = first_said(text, table_words(_TOPICS, language, topic, with_english=False), language)
    if said is None and normalize_language(language) != "en":
        said = first_said(text, table_words(_TOPICS, "en", topic), "en")
    if said is None:
        return False
    if normalize_language(language) in UNSPACED_LANGUAGES:
        return len("".join(text.split())) <= len("".join(said.split())) + 2 * _OWN_QUESTION_EXTRA_WORDS
    return len(tokens(text)) <= len(tokens(said)) + _OWN_QUESTION_EXTRA_WORDS


def can_do(language: str, example: str | None) -> str:
    """What the hub can do, with a command that works in this home when there is one."""
    said = phrase(language, "self.can_do")
    if example is None:
        return said
    command = phrase(language, "command.example_turn_on", name=example)
    return _joined(language, said, phrase(language, "self.example", example=command))


def stand_in_judge(language: str, request: str, echo: PromptEcho, read: list[str],
                   identify: LanguageIdentifier | None, entities: Iterable[Entity]) -> ReplyJudge:
    """The judge of a stand-in's reply for the home (the home's names are of no language)."""
    names = [n for e in entities for n in (e.name, e.area or "", *e.aliases)]
    return ReplyJudge(language, request, echo=echo, read=read, identify=identify, names=names)


def fallback(language: str, entities: Iterable[Entity]) -> str:
    """What the hub says instead of a stand-in's reply that did not pass the judge."""
    return _joined(language, phrase(language, "reply.withheld"), can_do(language, example_name((), list(entities))))


def _joined(language: str, *sentences: str) -> str:
    """Sentences spoken one after the other (no space between Chinese or Japanese ones)."""
    return ("" if normalize_language(language) in _NO_SPACE else " ").join(sentences)
