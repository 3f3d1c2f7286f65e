"""Preparing a language loaded for recognition: its templates built and kept, or compact
(`hub.understanding.compact_templates`), and what it holds.
"""

from __future__ import annotations

from typing import Any

from hassil.expression import Expression
from hassil.intents import TextSlotList
from hassil.string_matcher import _RANGE_TRIE_CACHE

from hub.home.device_text import example_name
from hub.home.entities import EntityStore
from hub.home.vocabulary import domain_words
from hub.locales import phrase
from hub.memory import object_bytes
from hub.understanding.compact_templates import rules, templates
from hub.understanding.recognition import HomeData, LanguageIntents


def keep_built(loaded: LanguageIntents, keep: bool) -> None:
    """Build every template's tree and keep it (a language prepared in full: 0.5-1.5 MiB more),
    or only the rules' (a compact language: each template is built when a text may match it; its
    rules, which every template names, stay built)."""
    built: dict[Any, Expression] = {}  # the parts the language's trees share, each built once
    for intents in loaded.intents:
        for rule in rules(intents):
            rule.pin(built)
        for sentence in templates(intents):
            if keep:
                sentence.pin(built)
            else:
                sentence.unpin()


def language_bytes(loaded: LanguageIntents, counted: set[int], *codes: str) -> int:
    """Bytes of a language's templates (compiled, and the trees kept) and its number words
    (`hub.understanding.number_words`, under each of its `codes`), but for objects `counted`
    already (`hub.memory.object_bytes`)."""
    return object_bytes([loaded, *(_RANGE_TRIE_CACHE.get(code) for code in codes)], counted)


def index_slot_lists(home: HomeData) -> None:
    """Have hassil index the home's area and floor lists now (it does so the first time a text
    reaches one: a few ms of a language's first command)."""
    for slots in home.slot_lists.values():
        if isinstance(slots, TextSlotList):
            slots.get_candidates("")


def warm_up_commands(language: str, store: EntityStore) -> list[str]:
    """Commands in `language` that walk the templates as a first command does: hassil compiles a
    pattern for each template word it tries (20-100 a language, 5-15 ms of a 10-30 ms first
    command) and keeps them. One names a device ("encén Desk Lamp"); one a light and a room
    ("encén llums Bedroom": a first "encén els llums de la cuina" built 95 patterns, 72 of them
    the light and colour templates', 2.3× the next command)."""
    commands = [phrase(language, "command.example_turn_on", name=example_name((), store.all()) or "")]
    english = set(domain_words("en"))
    lights = [word for word, domain in domain_words(language).items() if domain == "light"]
    light = next((word for word in lights if word not in english), lights[0] if lights else None)
    area = next((entity.area for entity in store.all() if entity.area), None)
    if light is not None and area is not None:
        commands.append(phrase(language, "command.example_turn_on", name=f"{light} {area}"))
    return commands
