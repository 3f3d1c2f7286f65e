"""From a recognized intent to what the fast path does: tool calls, a question, or nothing.

Targets are found as Home Assistant's intent handlers find them: a name (a slot value, or words
the resolver reads when the name is no slot value), narrowed by area, floor, domain and device
class; with no name, every device of the kind said in the area or floor said, or in the whole
home ("all the lights", "everywhere"). When a name fits several entities, the ones that support
what was asked are preferred (a color → the light that shows colors); still several: Ambiguous.
Devices that answer to the name said are ambiguous whatever their kinds (issue #30 item 4: a
discovered switch "Front Door" must not take "turn off the front door" from the lock), and a name
read in part never stands in for a device the sentence names outright ("Garage Door Opener" for
"turn on the garage door"): the command asks which one, naming them all.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hassil.models import MatchEntity, UnmatchedTextEntity
from hassil.recognize import RecognizeResult

from hub.home.catalogue import TURN_OFF_SERVICES, TURN_ON_SERVICES
from hub.home.colors import COLOR_MODES
from hub.home.entities import Entity, EntityStore
from hub.home.normalize import fold
from hub.locales.word_tables import first_said, table_words
from hub.understanding.device_intents import (
    DEVICE_INTENTS,
    NOT_A_PLACE,
    TOOL_DOMAINS,
    anywhere,
    device_tool,
    light_temperature,
    preferred,
)
from hub.understanding.assist_plans import ASSIST_INTENTS, SHOPPING_LIST, assist_call, weather_station
from hub.understanding.assist_responses import RESPONDED
from hub.understanding.targets import TargetFinder, narrowed
from hub.understanding.plans import Action, Ambiguous, Nevermind, NotFound, Plan, Question, said_slots
from hub.understanding.recognition import QUESTION_INTENTS, HomeData, bare_template
from hub.home.resolve import EntityResolver
from hub.home.siblings import primary
from hub.home.vocabulary import domain_words, says_music, stop_words

_MEDIA_ACTIONS = {"HassMediaPause": "pause", "HassMediaUnpause": "resume",
                  "HassMediaNext": "next", "HassMediaPrevious": "previous"}
_TOOL_DOMAINS = {
    "turn_on": set(TURN_ON_SERVICES) | {"lock"},  # the tool itself refuses locks, and says so
    "turn_off": set(TURN_OFF_SERVICES) | {"lock"},
    "set_light": {"light"},
    "set_temperature": {"climate", "water_heater"},
    "set_position": {"cover", "valve"},
    "media_control": {"media_player"},
    "set_volume": {"media_player"},
    **TOOL_DOMAINS,
}
# what "is anything on?" asks about: devices that are switched on, not sensors that are "on"
# (a thermostat heating or a water heater keeping warm is what it is for: not "left on")
_SWITCHED = frozenset({"light", "switch", "fan", "media_player", "humidifier", "vacuum", "input_boolean",
                       "lawn_mower"})
_ONE_LIST = frozenset({"add_to_list", "complete_on_list", "remove_from_list", "list_items"})
_LIST_INTENTS = frozenset({"HassListAddItem", "HassListCompleteItem", "HassListRemoveItem"})
_MAX_NAME_WORDS = 4  # "the kitchen ceiling light strip" is as long as device names get
_PLACES = frozenset({"name", "area", "floor", "domain"})  # where a wildcard may read unknown words
# words around a name that make a command; one ("tänd taklampan", "sytytä kattolamppu") only for a
# name the home has, never for "couldn't find"
_MIN_COMMAND_WORDS, _MAX_COMMAND_WORDS = 2, 4


class Planner:
    def __init__(self, store: EntityStore, resolver: EntityResolver) -> None:
        self._store = store
        self._resolver = resolver
        self._targets = TargetFinder(store, resolver)

    def plan(self, results: list[RecognizeResult], home: HomeData, language: str, text: str) -> Plan | None:
        """The first result that makes a plan (those whose domain the text names first); a name
        fitting several entities stops the search. A device named in a place it is not in is
        said so (HA's reply) only when no other reading makes a plan."""
        elsewhere = None  # a device named in a place it is not in: said only if nothing else fits
        for result in _shopping_list_as_ha_reads_it(_named_domain_first(results, text, language)):
            plan = self.plan_one(result, home, language, request=text)
            if isinstance(plan, NotFound) and plan.place is not None:
                elsewhere = elsewhere or plan
            elif plan is not None:
                return plan
        return elsewhere

    def plan_unmatched(self, results: list[RecognizeResult], home: HomeData, language: str,
                       text: str) -> Plan | None:
        """Matches whose name is no slot value: the resolver reads the name; a command about a
        device the home lacks is NotFound. Only a short command counts, with its name said in
        one piece, not a remark a wildcard swallowed ("it's too dark", "hey, what can you do"),
        and never "couldn't find" words that hold a device's whole name (a command's words the
        wildcard swallowed with it: "Robbie go back"), nor kinds in a place ("the lights in the
        attic"), nor filler words alone ("the" of "turn on the lights"); a kind the home has none
        of is not found ("start the robot vacuum").
        """
        if is_question(text) or any(_asks(r) for r in results):
            return None  # a question's words read as a name must not become an action
        said = f" {fold(text, language)} "
        not_found: NotFound | None = None
        for original in results:
            result = self._placed(original, language)
            unmatched = result.unmatched_entities
            name_slot = unmatched.get("name")
            if set(unmatched) - {"name", "domain"} or not isinstance(name_slot, UnmatchedTextEntity) \
                    or result.intent.name in QUESTION_INTENTS | ASSIST_INTENTS:
                continue
            name = str(name_slot.text).strip(" .,!?")
            folded = fold(name, language)
            words = len(folded.split())
            # the words besides the name and the slots the template matched ("auf 23 Grad")
            leftover = len(said.split()) - words - sum(
                len(fold(str(e.text), language).split()) for key, e in result.entities.items() if key != "name")
            if not folded or words > _MAX_NAME_WORDS or f" {folded} " not in said \
                    or not 1 <= leftover <= _MAX_COMMAND_WORDS or (leftover == 1 and bare_template(result)):
                continue
            plan = self.plan_one(result, home, language, name_text=name, text=text)
            if plan is not None:
                return plan
            if not_found is None and leftover >= _MIN_COMMAND_WORDS and result is original \
                    and self._resolver.match(name, language).tier != "name" \
                    and result.intent.name in ("HassTurnOn", "HassTurnOff") \
                    and set(result.entities) <= {"domain"} \
                    and not all(self._resolver.group_phrase(name, language)) \
                    and set(folded.split()) - stop_words(language) \
                    and not _to_the_assistant(name, language) \
                    and not self._resolver.resolve(name=name, language=language):
                not_found = NotFound(result.intent.name, name)
        return not_found

    def _a_device(self, text: str, language: str) -> bool:
        """Whether `text` names devices of the home that are no media player, or their kind."""
        match = self._resolver.match(text, language)
        return match.tier in ("name", "domain", "area_domain") and bool(match.best) \
            and all(e.domain != "media_player" for e in match.best)

    def _placed(self, result: RecognizeResult, language: str) -> RecognizeResult:
        """A result whose place no area's name matched: a floor's name in the request's language
        ("im Erdgeschoss") as the floor; else, with no name said, its words as the name's
        ("Licht in der Küche" in a home with no Kitchen area: the light named Kitchen Lights)."""
        area = result.unmatched_entities.get("area")
        if not isinstance(area, UnmatchedTextEntity) or "name" in result.unmatched_entities \
                or "name" in result.entities:
            return result
        unmatched = {k: v for k, v in result.unmatched_entities.items() if k != "area"}
        floor = self._resolver.floor_of(str(area.text), language)
        if floor is not None:
            return replace(result, unmatched_entities=unmatched, entities={
                **result.entities, "floor": MatchEntity(name="floor", value=floor, text=str(area.text))})
        as_name = UnmatchedTextEntity("name", str(area.text), is_open=False)
        return replace(result, unmatched_entities={**unmatched, "name": as_name})

    def plan_one(self, result: RecognizeResult, home: HomeData, language: str,
                 name_text: str | None = None, text: str | None = None, request: str = "") -> Plan | None:
        """`name_text`: a name the resolver reads (no slot value), said in `text` (the sentence);
        `request`: the sentence the result is of, if known."""
        plan = self._plan_one(result, home, language, name_text, text, request or text or "")
        if plan is not None and not isinstance(plan, Nevermind):
            plan.slots = said_slots(result, name_text)
        return plan

    def _plan_one(self, result: RecognizeResult, home: HomeData, language: str,
                  name_text: str | None, text: str | None, request: str) -> Plan | None:
        # an area "" is the speaker's, asked for by a template and unknown (recognition's `ANY_AREA`)
        slots = {key: entity.value for key, entity in result.entities.items()
                 if not (key == "area" and entity.value == "")}
        intent = result.intent.name
        if intent == "HassNevermind":
            return Nevermind()
        if intent in ("HassGetCurrentTime", "HassGetCurrentDate") or (
                intent == "HassRespond" and result.response in RESPONDED):
            return Question(intent, result.response or "default", [])
        if intent == "HassGetWeather":
            station = weather_station(slots, self._store)
            return Question(intent, result.response or "default", [station]) if station else None
        if intent in ASSIST_INTENTS:  # timers, lists, weather, broadcast (hub.understanding.assist_plans)
            call = assist_call(intent, slots, result, self._store, language)
            if call is not None and call[0] in _ONE_LIST and len(call[2]) > 1:  # "my tasks": which list?
                return Ambiguous(intent, call[2], Action(intent, *call, named=True))
            return Action(intent, *call) if call is not None else None
        tool, args = _tool_for(intent, slots)
        if (tool is None and intent not in QUESTION_INTENTS) or (
                tool == "search_and_play" and self._a_device(args["query"], language)):
            return None  # "démarre l'aspirateur" asks no player to play "l'aspirateur"
        required = result.intent_data.requires_context.get("domain") if result.intent_data else None
        placing = {k: v for k, v in slots.items() if k != NOT_A_PLACE.get(intent)}
        found = self._targets.find(intent, placing, home, language, name_text)
        if found is not None and required:  # "[scene] {name}": a bare name is a scene's
            allowed = {required} if isinstance(required, str) else set(required)
            found = [e for e in found[0] if e.domain in allowed], found[1]
        if found is None:
            return None
        targets, named = found
        if named and not targets and name_text is None \
                and (missing := self._named_elsewhere(intent, placing, result, home, language)) is not None:
            return missing
        if tool is None:
            return _question(result, slots, targets, named)
        able = _TOOL_DOMAINS.get(tool, set())
        targets = [e for e in targets if e.domain in able]
        if named and targets:
            said = name_text if name_text is not None else str(result.entities["name"].text)
            others = narrowed([e for e in self._targets.look_alikes(said, text, targets, home, language)
                               if e.domain in able], intent, slots, home)
            if others:
                options = sorted([*targets, *others], key=lambda e: e.entity_id)
                return Ambiguous(intent, options, Action(intent, tool, args, options, named))
        if named and len(targets) > 1:
            targets = _supporting(tool, args, primary(targets))
            if len(targets) > 1:
                return Ambiguous(intent, targets, Action(intent, tool, args, targets, named))
        if not named:
            targets, one = preferred(intent, targets, name_text is None and anywhere(intent, placing),
                                     says_music(request, language))
            if one:
                return Ambiguous(intent, targets, Action(intent, tool, args, targets, named))
        return Action(intent, tool, args, targets, named) if targets else None

    def _named_elsewhere(self, intent: str, placing: dict[str, Any], result: RecognizeResult, home: HomeData,
                         language: str) -> NotFound | None:
        """"play it on the living room player in the bedroom" (a name of the home's, said
        outright, in a place it is not in): HA's "no device called … in …"."""
        place = _place_said(placing)
        if place is None:
            return None
        elsewhere = (self._targets.find(intent, _unplaced(placing), home, language, None) or ([], False))[0]
        if names := {e.name for e in elsewhere}:
            said = str(result.entities["name"].text).strip()
            return NotFound(intent, names.pop() if len(names) == 1 else said, place=place)
        return None


def _question(result: RecognizeResult, slots: dict[str, Any], targets: list[Entity], named: bool) -> Question | None:
    """A question about the targets' state; one that says no kind of device ("is anything on
    upstairs?") asks about those that switch on."""
    intent = result.intent.name
    if intent == "HassGetState" and not named and not {"domain", "device_class"} & slots.keys():
        targets = [e for e in targets if e.domain in _SWITCHED]
    state = slots.get("state")
    state_text = result.entities["state"].text if "state" in result.entities else None
    return Question(intent, result.response or "default", targets,
                    str(state) if state is not None else None, state_text) if targets else None


def _place_said(slots: dict[str, Any]) -> tuple[str, str] | None:
    """The area (else floor) the slots say, as ("area" | "floor", its name)."""
    return next(((key, slots[key]) for key in ("area", "floor") if isinstance(slots.get(key), str)), None)


def _unplaced(slots: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in slots.items() if key not in ("area", "floor")}


def _to_the_assistant(name: str, language: str) -> bool:
    """Whether words read as a name speak to the assistant ("est-ce que tu aimes la musique":
    "tu aimes la musique" is no device the home lacks)."""
    return first_said(name.replace("-", " "), table_words("topics", language, "about_you", with_english=False),
                      language) is not None


def is_question(text: str) -> bool:
    """Whether the text ends with a question mark (Greek writes ";")."""
    return text.rstrip().endswith(("?", "？", ";", "؟"))


def _supporting(tool: str, args: dict[str, Any], targets: list[Entity]) -> list[Entity]:
    """Of several entities a name fits, those that can do what was asked, if that narrows it."""
    def supports(entity: Entity) -> bool:
        modes = set(entity.attributes.get("supported_color_modes") or ())
        if tool == "set_light" and "color" in args:
            return bool(modes & COLOR_MODES)
        if tool == "set_light" and "brightness" in args:
            return bool(modes - {"onoff"})
        return True

    able = [e for e in targets if supports(e)]
    return able or targets


def _asks(result: RecognizeResult) -> bool:
    """A question template with unknown words only where a name or place goes (not "Schalte"
    read as a cover's state)."""
    return result.intent.name in QUESTION_INTENTS and not set(result.unmatched_entities) - _PLACES


def _tool_for(intent: str, slots: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    if intent in ("HassTurnOn", "HassVacuumStart"):
        return "turn_on", {}
    if intent in ("HassTurnOff", "HassVacuumReturnToBase"):
        return "turn_off", {}
    if intent == "HassLightSet":
        args: dict[str, Any] = {}
        if isinstance(slots.get("brightness"), (int, float)):
            args["brightness"] = int(round(slots["brightness"]))
        if isinstance(slots.get("color"), str):
            args["color"] = slots["color"]
        args.update(light_temperature(slots))
        return ("set_light", args) if args else (None, {})
    if intent == "HassClimateSetTemperature" and isinstance(slots.get("temperature"), (int, float)):
        return "set_temperature", {"temperature": float(slots["temperature"])}
    if intent == "HassSetPosition" and isinstance(slots.get("position"), (int, float)):
        return "set_position", {"position": int(round(slots["position"]))}
    if intent in _MEDIA_ACTIONS:
        return "media_control", {"action": _MEDIA_ACTIONS[intent]}
    volume = slots.get("volume_level", slots.get("volume"))
    if intent == "HassSetVolume" and isinstance(volume, (int, float)):
        return "set_volume", {"volume": int(round(volume))}
    return device_tool(intent, slots) if intent in DEVICE_INTENTS else (None, {})


def _shopping_list_as_ha_reads_it(results: list[RecognizeResult]) -> list[RecognizeResult]:
    """HA's shopping-list templates' reading before a list intent's that names the shopping list
    by what people call it ("Entferne Milch von der Einkaufsliste" checks it off, as HA does;
    `hub.home.list_finder` gives the list its names)."""
    if not any(r.intent.name.startswith("HassShoppingList") for r in results):
        return results

    def by_another_name(result: RecognizeResult) -> bool:
        name = result.entities.get("name")
        return result.intent.name in _LIST_INTENTS and name is not None \
            and isinstance(name.value, frozenset) and name.value == {SHOPPING_LIST}

    return sorted(results, key=by_another_name)


def _named_domain_first(results: list[RecognizeResult], text: str, language: str) -> list[RecognizeResult]:
    """The results whose domain is one the text names by a device word (`hub/locales/words`)
    before those whose domain it does not: a word two domains' templates claim goes to the
    domain it names ("spegni il climatizzatore": Italian intents 2025.6 list "climatizzatore"
    among the fan words as well as the climate ones)."""
    said = f" {fold(text, language)} "
    named = {domain for word, domain in domain_words(language).items() if f" {word} " in said}
    if not named:
        return results

    def other_domain(result: RecognizeResult) -> bool:
        domain = result.entities.get("domain")
        return domain is not None and domain.value not in named

    return sorted(results, key=other_domain)
