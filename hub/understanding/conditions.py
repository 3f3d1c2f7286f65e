"""Commands that wait on one reading: "if the guest room is above 23, set it to 22", "stell den
Thermostat auf 22, wenn das Gästezimmer über 23 Grad ist" (issue #39 point 1).

The condition is read once, now — a room's temperature (its thermostat's, else a temperature
sensor's there), a device's value, or the reading the condition names ("the humidity in the
bathroom") — and compared with the number said. Met: the command is carried out as any other
(the fast path, within the policy), "it" meaning what was read; not met: nothing is done and the
answer says why; what cannot be read is said so, never guessed. Watching a value until it
changes is `hub.home.watches`' ("tell me when …"), not this.

The words are the main languages' (`condition.*` of `hub/locales/words/questions/`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hub.home.device_readings import PARTS, reading
from hub.home.entities import Entity, EntityStore
from hub.home.normalize import base_language, fold
from hub.home.question_words import QuestionWords, question_words
from hub.home.resolve import EntityResolver
from hub.home.state_speech import number_value

_DECIMAL = re.compile(r"(\d)[.,](\d)")
_NUMBER = re.compile(r"^-?\d+(?:d\d+)?$")  # a number as folded here ("23d5": 23.5)


@dataclass(frozen=True)
class Conditional:
    subject: str  # what the condition reads, as said ("the guest room", "la chambre d'amis")
    above: bool  # above the limit (else below)
    limit: float
    command: str  # the command, as said ("set it to 22")
    part: str  # the reading compared ("temperature" unless another is said)


def read_conditional(text: str, language: str) -> Conditional | None:
    """The condition and the command of `text`, None when it is no such sentence."""
    words = question_words(base_language(language))
    if words is None or not words.table.get("condition.if"):
        return None
    folded, starts = _words(text, language)
    said = f" {' '.join(folded)} "
    condition_word = words.said(said, "condition.if")
    if condition_word is None:
        return None
    at = _find(folded, condition_word.split())
    if at is None:
        return None
    after = at + len(condition_word.split())
    found = _condition(folded[after:], words)
    if found is None:
        return None
    subject_words, above, limit, used = found
    rest = after + used
    end = after + subject_words
    subject = text[starts[after]:starts[end]].strip(" ,;") if end < len(starts) else ""
    if at == 0 and rest < len(folded):  # "if …, set it to 22"
        command = text[starts[rest]:]
    elif at > 0 and rest == len(folded):  # "set it to 22 if …"
        command = text[:starts[at]]
    else:
        return None
    part = next((key.removeprefix("part.") for key in words.keys_said(f" {fold(subject, language)} ", "part.")),
                "temperature")
    command = command.strip(" ,;.")
    return Conditional(subject, above, limit, command, part if part in PARTS else "temperature") if command else None


def read_value(conditional: Conditional, store: EntityStore, resolver: EntityResolver,
               language: str) -> tuple[Entity | None, float | None, list[Entity]]:
    """What the condition reads: (the entity read, its value, the devices "it" means); the
    entity is None when the subject names nothing, the value when it has no number to compare."""
    words = question_words(base_language(language))
    said = fold(conditional.subject, language).split()
    while said and words is not None and words.says(f" {said[0]} ", "word.stop"):  # "the guest room"
        said.pop(0)
    subject = " ".join(said)
    area = resolver.area_of(subject, language) or resolver.area_of(
        " ".join(w for w in said if words is None or not words.says(f" {w} ", "word.stop")), language)
    entities = store.all()
    if area is not None:
        here = [e for e in entities if e.area == area]
        read = next((r for e in here if (r := reading(e, conditional.part, [e])) is not None), None)
        devices = [e for e in here if e.domain == "climate"] or ([read] if read else [])
    else:
        named = resolver.resolve(name=subject, language=language, partial=False) or \
            resolver.resolve(name=subject, language=language)
        read = next((r for e in named[:1] if (r := reading(e, conditional.part, entities)) is not None),
                    named[0] if len(named) == 1 else None)
        devices = named[:1]
    return read, _value(read) if read is not None else None, devices


def met(conditional: Conditional, value: float) -> bool:
    return value > conditional.limit if conditional.above else value < conditional.limit


def _value(entity: Entity) -> float | None:
    if entity.domain in ("climate", "water_heater", "humidifier"):
        key = "current_humidity" if entity.domain == "humidifier" else "current_temperature"
        return number_value(entity.attributes.get(key))
    return number_value(entity.state)


def _condition(folded: list[str], words: QuestionWords) -> tuple[int, bool, float, int] | None:
    """(the subject's words, above, limit, words used) of the words after "if": "the guest room
    is above 23 degrees"; the number's unit and verbs after it ("… über 23 Grad ist,") are used too."""
    for key in ("condition.above", "condition.below"):
        for phrase in words.table.get(key, ()):
            at = _find(folded, phrase.split())
            if at is None or at == 0:
                continue
            number_at = at + len(phrase.split())
            if number_at >= len(folded) or not _NUMBER.match(folded[number_at]):
                continue
            used = number_at + 1
            while used < len(folded) and (words.says(f" {folded[used]} ", "condition.unit")
                                          or words.says(f" {folded[used]} ", "condition.then")
                                          or words.says(f" {folded[used]} ", "word.stop")):
                used += 1
            subject = at
            while subject and words.says(f" {folded[subject - 1]} ", "word.stop"):  # "the attic is"
                subject -= 1
            return subject, key == "condition.above", float(folded[number_at].replace("d", ".")), used
    return None


def _words(text: str, language: str) -> tuple[list[str], list[int]]:
    """The text's folded words (a decimal number kept whole: "23d5"), each with where its
    written word starts in `text`."""
    folded, starts = [], []
    for match in re.finditer(r"\S+", text):
        for word in fold(_DECIMAL.sub(r"\1d\2", match.group()), language).split():
            folded.append(word)
            starts.append(match.start())
    return folded, starts


def _find(words: list[str], phrase: list[str]) -> int | None:
    return next((i for i in range(len(words) - len(phrase) + 1) if words[i:i + len(phrase)] == phrase), None)
