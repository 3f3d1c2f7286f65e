"""Which entities a recognized command's slots mean, as Home Assistant's intent handlers find them.

A name (a slot value, or words the resolver reads when the name is no slot value), narrowed by
area, floor, domain and device class; with no name, every device of the kind said in the area or
floor said, or in the whole home ("all the lights", "everywhere").

A kind of device said with no place ("the tv", "the lock", "la musique"; issue #40) means the
home's one device of that kind; of several, the one whose name says the kind ("Bedroom TV" for
"the tv"), a media player that plays for "the music" — else, for the kinds a home has few of
(vacuums, locks, valves …, not lights), a question naming them.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from hub.home.entities import Entity, EntityStore
from hub.home.normalize import fold
from hub.home.resolve import EntityResolver
from hub.home.siblings import primary
from hub.home.vocabulary import stop_words
from hub.understanding.device_intents import IMPLIED_DOMAINS, anywhere
from hub.understanding.recognition import HomeData, Names

# The kind of device an intent means when the sentence does not say ("set the temperature").
IMPLIED_DOMAIN = {"HassLightSet": "light", "HassClimateSetTemperature": "climate",
                  "HassClimateGetTemperature": "climate", **IMPLIED_DOMAINS}
MAX_ASKED = 5  # devices of a kind said with no place that one question may name
# kinds a home has few of: "the vacuum" with no place asks which; "the lights" are the room's (the model's)
_FEW = frozenset({"vacuum", "lawn_mower", "lock", "valve", "media_player", "climate", "water_heater",
                  "humidifier"})


class TargetFinder:
    def __init__(self, store: EntityStore, resolver: EntityResolver) -> None:
        self._store = store
        self._resolver = resolver
        self._forms: tuple[Names, dict[str, set[str]]] | None = None  # folded spoken form → entity ids

    def find(self, intent: str, slots: dict[str, Any], home: HomeData, language: str,
             name_text: str | None) -> tuple[list[Entity], bool] | None:
        """The entities the slots mean, and whether a name picked them (else a group)."""
        domain = slots.get("domain") if isinstance(slots.get("domain"), str) else IMPLIED_DOMAIN.get(intent)
        named = False
        if isinstance(slots.get("name"), frozenset):
            pool = [e for e in map(self._store.get, sorted(slots["name"])) if e is not None]
            named = True
        elif name_text is not None:
            group, placed = self._resolver.group_phrase(name_text, language)
            pool = self._resolver.resolve(name=name_text, domain=domain, language=language)
            if group and not placed and not isinstance(slots.get("area"), str):
                one = self.one_of_kind(name_text, pool, language)
                if one is None:
                    return None  # "the lamps" with no room said, in a home of many: not every lamp
                pool, group = one, False  # "turn on the fan" in a home with one fan: that fan
            named = not group
        elif isinstance(slots.get("area"), str) or isinstance(slots.get("floor"), str) \
                or "domain" in slots or slots.get("device_class"):
            pool = self._store.all()
        elif intent in ("HassClimateGetTemperature", "HassClimateSetTemperature", "HassLightSet") \
                or anywhere(intent, slots) or (intent == "HassGetState" and "state" in slots):
            # "what is the temperature", "set the temperature to 21", "all lights blue": every
            # device of the intent's kind, as HA's handlers do when no satellite area is known
            pool = self._store.all()
        else:
            return None
        targets = narrowed(pool, intent, slots, home, named)
        if not named and name_text is not None and len(targets) > 1 \
                and all(e.domain == "media_player" for e in targets):
            # "the bedroom television": its TV, not its speakers too (a player's kind word names a sort of it)
            targets = self._resolver.named_by_kind(name_text, targets, language) or targets
        return targets, named

    def one_of_kind(self, said: str, pool: list[Entity], language: str) -> list[Entity] | None:
        """The devices a kind said with no place means (`pool`: every device of that kind): the
        one, the one its name says, a media player that plays; else all of them for a question
        when they are of a kind a home has few of, and few (`MAX_ASKED`); else None."""
        pool = primary(pool)
        if len(pool) > 1:
            pool = primary(self._resolver.named_by_kind(said, pool, language)) or pool
        if len(pool) > 1 and all(e.domain == "media_player" for e in pool):
            pool = [e for e in pool if e.state == "playing"] or pool  # "the music": what plays
        if len(pool) > 1 and not all(e.domain in _FEW for e in pool):
            return None
        return pool if 1 <= len(pool) <= MAX_ASKED else None

    def look_alikes(self, said: str, text: str | None, targets: list[Entity], home: HomeData,
                    language: str) -> list[Entity]:
        """The entities besides `targets` that answer to the name said, whatever their kind; and,
        for a name the resolver read in `text` when the targets are none of the devices the
        sentence names outright, those devices."""
        chosen = {e.entity_id for e in targets}
        ids = self._answering(said, home.names, language)
        if text is not None:
            outright = self._resolver.match(text, language)
            named = {e.entity_id for e in outright.best}
            if outright.tier == "name" and not named & chosen:
                ids |= named
        return [e for e in map(self._store.get, sorted(ids - chosen)) if e is not None]

    def _answering(self, said: str, names: Names, language: str) -> set[str]:
        """The entities with `said` (filler words around it aside) among their spoken names."""
        if self._forms is None or self._forms[0] is not names:
            forms: dict[str, set[str]] = defaultdict(set)
            for form, ids in names.spoken:
                forms[fold(form)].update(ids)
            self._forms = names, forms
        words = fold(said, language).split()
        stops = stop_words(language)
        while words and words[0] in stops:
            words.pop(0)
        while words and words[-1] in stops:
            words.pop()
        return set(self._forms[1].get(" ".join(words), ()))


def narrowed(pool: list[Entity], intent: str, slots: dict[str, Any], home: HomeData,
             named: bool = False) -> list[Entity]:
    """Those of `pool` in the area or floor, of the kind and device class the slots say (the
    kind the intent implies only when no name was said: a template that names a device
    says its domains, "set the water heater to 50 degrees" as well as the thermostat)."""
    implied = None if named else IMPLIED_DOMAIN.get(intent)
    domain = slots.get("domain") if isinstance(slots.get("domain"), str) else implied
    device_class = slots.get("device_class")
    # a list when the template's words fit several kinds ("gardiner": blinds, curtains, shutters)
    device_classes = set(device_class) if isinstance(device_class, list) else {device_class}
    areas: set[str] | None = None
    if isinstance(slots.get("area"), str):
        areas = {slots["area"]}
    if isinstance(slots.get("floor"), str):
        floor = home.floors.get(slots["floor"])
        on_floor = set(floor.areas) if floor else set()
        areas = on_floor if areas is None else areas & on_floor
    if areas is not None:
        pool = [e for e in pool if e.area in areas]
    if domain:
        # "are any windows open": covers and window sensors alike
        pool = [e for e in pool if e.domain == domain or (
            device_class and intent == "HassGetState" and e.domain == "binary_sensor")]
    if device_class:
        pool = [e for e in pool if e.device_class in device_classes]
    return pool
