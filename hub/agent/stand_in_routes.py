"""What a stand-in model (under the small-model size) is never handed, and the hub's own words
instead:

- "what can you do?", "who are you?" (in 35 languages): the hub's own answer (`OwnQuestions`,
  before the fast path);
- after every other direct route, so that whatever the hub can read (the fast path's answers)
  is answered from the home first (`StandInLimits`): a request about the weather, a calendar or
  a list, in any form, and a question of fact about the home or the world — a state, the time,
  a quantity, "who wrote Hamlet?" (`hub/locales/topics`, the 8 main languages; English and the
  phrases' question words in the others): what the hub cannot read is said plainly ("There is
  no weather service in this home." in a home without one), never made up by a model that
  would invent it (SmolLM2: "The Hauptstadt von Australien.", "La luna está la luna."); a
  command the hub cannot carry out here ("read my emails", "call Liza", "order a pizza"): "I
  can't do that here", and what it can do, never a stand-in that would pretend it did; a
  request with words of no language the hub knows ("blorp the fnord"): "I didn't understand";
  and chit-chat in a language the model's file does not list (`ModelInfo.languages`): the
  fallback.

Chit-chat (jokes, stories, "how are you?", "do you like music?") still goes to the stand-in,
whose reply is spoken only as far as it passes the judge (`stand_in_judge`,
`hub.agent.judged_release`), else `fallback`.
"""

from __future__ import annotations

import re
from typing import Callable, Iterable

from hub.agent.judge import ReplyJudge
from hub.agent.ports import HomeView, LanguageIdentifier
from hub.agent.prompt_echo import PromptEcho
from hub.agent.relevance import asks_chit_chat, ends_on_question_mark, is_asked, is_chit_chat, unknown_word
from hub.agent.turn import TurnState, not_understood_answer
from hub.agent.utterances import is_question
from hub.core.answer import DirectAnswer
from hub.home.device_text import example_name
from hub.home.entities import Entity
from hub.locales import UNSPACED_LANGUAGES, normalize_language, phrase
from hub.locales.lexicon import has_lexicon
from hub.locales.word_tables import first_said, table_words, tokens

_TOPICS = "topics"
_OWN_QUESTION_EXTRA_WORDS = 3  # "what can you do for me today": a question to the hub still
# topics asked about in any form ("weather tomorrow"), each with the domain that would answer it
_ANY_FORM = (("weather", "weather", "missing.weather"), ("calendar", "calendar", "missing.calendar"),
             ("lists", "todo", "missing.list"))
# an elided article or preposition before the word it belongs to ("l'ombrello", "dell'Australia")
_ELIDED = re.compile(r"\b(l|d|j|m|t|s|n|c|qu|un|dell|dall|nell|sull|all|quell)['’](?=\w)", re.IGNORECASE)
_NO_SPACE = frozenset({"ja", "zh"})


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
    """What a stand-in must not be handed, tried after every other direct route (`languages`:
    those the model's file says it speaks; none said: any)."""

    def __init__(self, home: HomeView | None, stand_in: Callable[[], bool],
                 languages: Callable[[], tuple[str, ...]] = tuple) -> None:
        super().__init__(home, stand_in)
        self._languages = languages

    def reply(self, text: str, language: str) -> str | None:
        """The hub's own answer to `text`, or None: the stand-in may chat."""
        domains = {e.domain for e in self._entities()}
        for topic, domain, missing in _ANY_FORM:
            if _topic_said(text, language, topic):
                return phrase(language, missing if domain not in domains else "self.cannot_read")
        if asks_a_fact(text, language):
            return phrase(language, "self.cannot_read")
        if not is_question(text, language) and _topic_said(text, language, "outside"):
            return _joined(language, phrase(language, "self.cannot_do"), can_do(language, None))
        return None

    async def try_answer(self, state: TurnState) -> DirectAnswer | None:
        answer = await super().try_answer(state)
        if answer is not None or not state.persona.home or not self._stand_in():
            return answer
        # words of no language it may be in ("blorp the fnord please"), said in the one it named
        language = normalize_language(state.request.language, default=state.language)
        names = {w for e in self._entities() for n in (e.name, e.area or "", *e.aliases) for w in tokens(n)}
        judged = [code for code in {language, state.language, *state.languages} if has_lexicon(code)]
        if judged and all(unknown_word(state.text, code, names) is not None for code in judged):
            return not_understood_answer(language, example_name((), self._entities()))
        # chit-chat in a language the model's file does not say it speaks (SmolLM2: English
        # alone; its German was "Ich habe die Lieblingsfarbe, die für die Auswahl von wasen …")
        speaks = self._languages()
        if speaks and normalize_language(state.language) not in speaks and is_chit_chat(state.text, state.language):
            return DirectAnswer(fallback(state.language, self._entities()), "hub_answer")
        return None


def asks_a_fact(text: str, language: str) -> bool:
    """Whether `text` is a question of fact, about the home or the world (a state, the time, a
    quantity, "who wrote Hamlet?", "do you know if the lamp is on?"): any question but one to
    the assistant itself ("do you like music?", "what's your favourite colour?") or one for
    chit-chat ("how are you?", "can you tell me a joke?")."""
    prefix = first_said(text, table_words(_TOPICS, language, "info_prefix"), language)
    rest = " ".join(tokens(text)[len(tokens(prefix)):]) if prefix and _starts(text, prefix) else text
    if not (ends_on_question_mark(text) or is_asked(rest, language)):  # "tell me a joke"
        return False
    # "comment vas-tu": the pronoun after its verb's hyphen is a word of its own
    if first_said(rest.replace("-", " "), table_words(_TOPICS, language, "about_you"), language) is not None:
        return False
    return not asks_chit_chat(text, language)


def _topic_said(text: str, language: str, topic: str) -> bool:
    """Whether `text` says a word of `topic`, after an elided article too ("l'ombrello")."""
    words = table_words(_TOPICS, language, topic)
    return first_said(text, words, language) is not None or first_said(
        _ELIDED.sub(r"\1 ", text), words, language) is not None


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
