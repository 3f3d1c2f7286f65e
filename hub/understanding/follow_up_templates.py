"""The hub's own templates for follow-ups and relative commands, one file per language.

`hub/locales/follow_ups/<lang>.yaml` (hassil's sentence syntax, all 35 languages) has `rules`
(the expansion rules its sentences use), `amount` (the words that make a step `small` or
`large`) and `sentences`: per kind of request (`KINDS`: "turn it off", "make it 50%", "and the
bedroom too", "the other one", "all of them", "a bit brighter", "it's too dark in here" …) its
templates. `{area}` and `{name}` are the home's areas and names, `{value}` a number, `{amount}`
the amount words. The language's skip words are Home Assistant's (please, can you …).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import islice
from pathlib import Path
from typing import Any

import yaml
from hassil.intents import Intents, SlotList, TextSlotList
from hassil.recognize import recognize_all
from home_assistant_intents import get_intents

from hub.understanding.recognition import intents_language

_FOLDER = Path(__file__).resolve().parents[1] / "locales" / "follow_ups"
_MAX_RESULTS = 8

# kind → (what is asked, the level it changes (None: the recent targets' own), direction)
KINDS: dict[str, tuple[str, str | None, int]] = {
    "turn_on": ("on", None, 0), "turn_off": ("off", None, 0), "set": ("set", None, 0),
    "area_too": ("area", None, 0), "other": ("other", None, 0), "all": ("all", None, 0),
    "up": ("relative", None, 1), "down": ("relative", None, -1),
    "brighter": ("relative", "brightness", 1), "dimmer": ("relative", "brightness", -1),
    "warmer": ("relative", "temperature", 1), "cooler": ("relative", "temperature", -1),
    "louder": ("relative", "volume", 1), "quieter": ("relative", "volume", -1),
    "open_more": ("relative", "position", 1), "close_more": ("relative", "position", -1),
    "too_dark": ("indirect", "brightness", 1), "too_bright": ("indirect", "brightness", -1),
    "too_cold": ("indirect", "temperature", 1), "too_hot": ("indirect", "temperature", -1),
    "too_loud": ("indirect", "volume", -1),
}


@dataclass(frozen=True)
class Said:
    """What a follow-up or relative request said: its kind's meaning and slots."""

    kind: str
    what: str  # on | off | set | area | other | all | relative | indirect
    quantity: str | None
    direction: int
    amount: str = "normal"  # small | normal | large
    value: float | None = None
    area: str | None = None
    names: frozenset[str] = frozenset()  # entity ids of a name said


def template_file(language: str) -> Path:
    return _FOLDER / f"{language}.yaml"


@lru_cache(maxsize=None)
def spec_of(language: str) -> dict[str, Any] | None:
    """The language's file as written (None: no file)."""
    path = template_file(language)
    if not path.is_file():
        return None
    spec: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    unknown = set(spec["sentences"]) - set(KINDS)
    if unknown:
        raise ValueError(f"{path}: unknown kinds {sorted(unknown)}")
    return spec


@lru_cache(maxsize=None)
def load(language: str) -> Intents | None:
    """The language's templates as hassil intents (None: no file); cached for the process."""
    spec = spec_of(language)
    if spec is None:
        return None
    amounts = [{"in": words, "out": amount} for amount, said in (spec.get("amount") or {}).items()
               for words in said]
    code = intents_language(language)
    package = (get_intents(code) if code else None) or {}
    data: dict[str, Any] = {
        "language": language,
        "intents": {kind: {"data": [{"sentences": list(sentences)}]}
                    for kind, sentences in spec["sentences"].items()},
        "expansion_rules": dict(spec.get("rules") or {}),
        "lists": {"amount": {"values": amounts},
                  "value": {"range": {"from": 0, "to": 100, "fractions": "halves"}}},
        # HA's words said around a command ("please"), and the file's said before a follow-up ("now")
        "skip_words": [*(package.get("skip_words") or ()), *(spec.get("skip") or ())],
    }
    return Intents.from_dict(data)


def read(text: str, language: str, areas: SlotList, names: SlotList) -> Said | None:
    """The first reading of `text` by the language's templates (strict: every word is the
    template's or a slot's), or None."""
    intents = load(language)
    if intents is None or not text.strip():
        return None
    lists = {"area": areas, "name": names}
    for result in islice(recognize_all(text, intents, slot_lists=lists, language=language), _MAX_RESULTS):
        if any(e.is_wildcard for e in result.entities.values()):
            continue
        slots = {key: entity.value for key, entity in result.entities.items()}
        what, quantity, direction = KINDS[result.intent.name]
        value = slots.get("value")
        named = slots.get("name")
        return Said(result.intent.name, what, quantity, direction, str(slots.get("amount") or "normal"),
                    float(value) if isinstance(value, (int, float)) else None,
                    str(slots["area"]) if isinstance(slots.get("area"), str) else None,
                    frozenset(named) if isinstance(named, frozenset) else frozenset())
    return None


NO_NAMES = TextSlotList.from_tuples([], allow_template=False)
