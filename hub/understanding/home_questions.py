"""Questions about the home that no template reads, answered from the home's own data (issue #39
point 1), in the languages with question words (`hub/locales/words/questions/`):
- a device's other readings: "battery level of the motion sensor" (hub.home.device_readings);
- what media players play ("what's playing?", "is the speaker playing, paused or stopped?");
- the weather now, today, tomorrow, this week, and outside ("what's the outside temperature?":
  the weather service's before a stray sensor's, both said when there are both); the temperature
  inside;
- to-do items by the question's words ("who do I need to call?": "Call Liza"), of the lists it
  names by what people call them (hub.home.list_finder), else of every list;
- calendar events today, tomorrow, this week or next, by the question's words ("who am I meeting
  for dinner?") or away from home ("am I leaving the house today?": those with a place);
- else, for a question that says a device's name, that device's state (HA's "what is {name}").
What needs a service's answer (events, items, the forecast) is the reading tool's call; the rest a
`Question` answered from state. A reading never acts; what the home lacks is said ("there is no
weather service in this home"), never made up.
"""

from __future__ import annotations

import re
from typing import Iterable

from hassil.recognize import RecognizeResult

from hub.home.device_readings import PARTS, reading
from hub.home.entities import Entity, EntityStore
from hub.home.list_finder import lists_meant
from hub.home.name_words import name_translations, whole_name_translations
from hub.home.normalize import base_language, fold
from hub.home.question_words import QuestionWords, every_language, question_words, said_form
from hub.understanding.planning import is_question
from hub.understanding.plans import Action, Plan, Question
from hub.understanding.recognition import QUESTION_INTENTS, HomeData, Names, bare_template

_STATE_QUESTIONS = ("HassGetState", "HassClimateGetTemperature")
_MAX_WORDS = 8  # words an event or item is looked up by
_WHEN = ("today", "tomorrow", "week", "next")


class QuestionReader:
    def __init__(self, store: EntityStore) -> None:
        self._store = store
        self._translations_of: tuple[Names, str] | None = None  # the names and language translated
        self._translations: list[tuple[str, frozenset[str]]] = []

    def plan(self, text: str, home: HomeData, language: str) -> Plan | None:
        """A reading for a question about a device's part or a topic (None: not one)."""
        words = question_words(base_language(language))
        if words is None:
            return None
        said = said_form(text, language)
        if words.says(said, "topic.outside") and words.says(said, "topic.temperature") and self._of("weather"):
            return self._weather(said, words, outside=True)  # the weather service's, before a sensor's
        asked = is_question(text) or any(said.startswith(f" {w} ") for w in words.table.get("word.question", ()))
        # a name said in another language only in a question: "Stell die Wärmepumpe auf 23 Grad"
        # is HeatPump's command, not its reading of degrees
        named = self._named(said, home, language if asked else None)
        parts = words.keys_said(said, "part.")
        if named and parts and (part := parts[0].removeprefix("part.")) in PARTS:
            return self._reading(named, part)
        if not asked:
            return None
        plan = self._topic(said, words, named)
        if isinstance(plan, Action) and "words" in plan.args:  # said back as said ("zadzwonić", not "zadzwonic")
            written = {fold(w, language): w for w in re.findall(r"\w+", text)}
            plan.args["words"] = [written.get(w, w) for w in plan.args["words"]]
        return plan

    def named_question(self, text: str, home: HomeData, language: str,
                       unmatched: list[RecognizeResult]) -> Question | None:
        """A question no template matched that says a device's name ("what is the air pressure
        of the outside sensor?"): that device's state, as HA's "what is {name}" answers. Not when
        the words read as a command and not as a question (a request phrased as a question is
        the model's)."""
        asks = any(r.intent.name in QUESTION_INTENTS for r in unmatched)
        commands = any(r.intent.name not in QUESTION_INTENTS and not bare_template(r) for r in unmatched)
        if not is_question(text) or (commands and not asks):
            return None
        said = f" {fold(text, language)} "
        targets = self._named(said, home, language)
        targets = self._part_asked(targets, said, language)
        return Question("HassGetState", "one", targets) if targets else None

    def outside_first(self, plan: Plan) -> Plan:
        """HA's templates read "what's the outside temperature?" as the sensor named so: the
        weather service's temperature is said first, then the sensor's (both named)."""
        stations = self._of("weather") if isinstance(plan, Question) and plan.intent in _STATE_QUESTIONS \
            and plan.targets and all(e.device_class == "temperature" and _outside(e) for e in plan.targets) else []
        if isinstance(plan, Question) and stations:
            return Question("HubOutside", "temperature", [stations[0], *plan.targets], slots=plan.slots)
        return plan

    # --- what a question asks about ----------------------------------------------------------

    def _topic(self, said: str, words: QuestionWords, named: list[Entity]) -> Plan | None:
        if words.says(said, "topic.taste"):  # "¿te gusta la música?" is chit-chat, no player's state
            return None
        players = [e for e in named if e.domain == "media_player"]
        if players or (words.says(said, "topic.media") and not named):  # "läuft die Waschmaschine?" is no music
            return self._media(players)
        outside, temperature = words.says(said, "topic.outside"), words.says(said, "topic.temperature")
        if words.says(said, "topic.weather") or (outside and temperature):
            return self._weather(said, words, outside and temperature)
        if temperature and words.says(said, "topic.inside"):
            return self._inside()
        calendars = [e for e in named if e.domain == "calendar"]
        if words.says(said, "topic.away"):  # "muss ich heute aus dem Haus?" is no list's "muss ich"
            return self._events(said, words, calendars)
        lists = self._of("todo")
        meant = lists_meant(said, lists)
        if meant or words.says(said, "topic.list"):
            return self._items(said, words, lists, meant)
        devices = [e for e in named if e.domain not in ("calendar", "todo", "weather")]
        # "what classes do I have this week?", "what do I have tomorrow?": a time, and words to look
        # for or of plans ("how are you today?" has neither)
        # ("right now" is no day: "how warm is it in the living room at the moment?")
        days = [key for key in words.keys_said(said, "time.") if key != "time.now"]
        if words.says(said, "topic.calendar") or (not devices and days
                                                  and (words.content(said) or words.says(said, "topic.plans"))):
            return self._events(said, words, calendars)
        return None

    def _reading(self, named: list[Entity], part: str) -> Question:
        """The named device's `part` reading; none: said so (`HubDeviceReading` with no target)."""
        entities = self._store.all()
        found = {r.entity_id: r for e in named if (r := reading(e, part, entities)) is not None}
        if [e.entity_id for e in named] == list(found):  # the device named is the reading: HA's "what is {name}"
            return Question("HassGetState", "one", named)
        return Question("HubDeviceReading", part, list(found.values()), slots={"name": named[0].name})

    def _media(self, named: list[Entity]) -> Question | None:
        players = named or self._of("media_player")
        return Question("HubMediaState", "named" if named else "all", players) if players else None

    def _weather(self, said: str, words: QuestionWords, outside: bool) -> Plan:
        stations = self._of("weather")
        if outside:
            sensors = [e for e in self._of("sensor") if e.device_class == "temperature" and _outside(e)]
            return Question("HubOutside", "temperature", [*stations[:1], *sensors]) if stations or sensors \
                else Question("HubMissing", "weather", [])
        if not stations:
            return Question("HubMissing", "weather", [])
        when = _when(said, words)
        if when in ("today", "tomorrow", "week"):
            return Action("HubWeatherForecast", "weather_forecast", {"when": when}, stations[:1])
        return Question("HassGetWeather", "default", stations[:1])

    def _inside(self) -> Question | None:
        found = [e for e in self._store.all() if (e.domain == "climate" or (
            e.domain == "sensor" and e.device_class == "temperature")) and not _outside(e)]
        return Question("HassGetState", "one", found) if found else None

    def _items(self, said: str, words: QuestionWords, lists: list[Entity], meant: list[Entity]) -> Plan:
        if not lists:
            return Question("HubMissing", "list", [])
        looked_for = words.content(said, tuple(n for e in lists for n in (e.name, *e.aliases)))
        args = {"words": looked_for[:_MAX_WORDS]} if looked_for else {}
        return Action("HubListItems", "list_items", args, meant if len(meant) == 1 else [])

    def _events(self, said: str, words: QuestionWords, calendars: list[Entity]) -> Plan:
        if not self._of("calendar"):
            return Question("HubMissing", "calendar", [])
        away = words.says(said, "topic.away")
        looked_for = [] if away else words.content(said, tuple(e.name for e in self._of("calendar")))
        args: dict[str, object] = {"when": _when(said, words) or ("today" if away else "next")}
        if looked_for:
            args["words"] = looked_for[:_MAX_WORDS]
        if away:
            args["away"] = True
        return Action("HubCalendarEvents", "calendar_events", args, calendars[:1])

    # --- helpers -----------------------------------------------------------------------------

    def _named(self, said: str, home: HomeData, language: str | None) -> list[Entity]:
        """The entities of the longest name of the home said; else of a name that is one concept,
        said in `language` ("détecteur de mouvement": "Motion Sensor"; None: not looked for)."""
        for name, entity_ids in home.names.spoken:
            if f" {fold(name)} " in said:
                return self._entities(entity_ids)
        for translation, entity_ids in self._translated(home, base_language(language)) if language else ():
            if f" {translation} " in said:
                return self._entities(entity_ids)
        return []

    def _translated(self, home: HomeData, language: str) -> list[tuple[str, frozenset[str]]]:
        """The home's names that are one concept, said in `language`, longest first (built once
        per home's names and language)."""
        if self._translations_of is None or self._translations_of[0] is not home.names \
                or self._translations_of[1] != language:
            found = [(t, entity_ids) for name, entity_ids in home.names.spoken
                     for t in whole_name_translations(fold(name), language)]
            self._translations = sorted(found, key=lambda item: -len(item[0]))
            self._translations_of = home.names, language
        return self._translations

    def _entities(self, entity_ids: Iterable[str]) -> list[Entity]:
        return [e for e in map(self._store.get, sorted(entity_ids)) if e is not None]

    def _of(self, domain: str) -> list[Entity]:
        return [e for e in self._store.all() if e.domain == domain]

    def _part_asked(self, targets: list[Entity], said: str, language: str) -> list[Entity]:
        """The entity of the named device that the other words ask about: "the battery level of
        the hallway motion sensor" is its battery sensor ("Hallway Motion Sensor Battery"), not
        its motion state. A sibling (same device) fits when every word its name adds to the
        device's, or that word in the request's language, is said (any language: no table)."""
        devices = {e.device_id: e for e in targets if e.device_id}
        if len(targets) != 1 or not devices:
            return targets
        own = set(fold(targets[0].name).split())
        fits = [e for e in self._store.all() if e.device_id in devices and e not in targets
                and (extra := set(fold(e.name).split()) - own)
                and all(f" {w} " in said or any(f" {t} " in said for t in name_translations(w, language))
                        for w in extra)]
        return fits if len(fits) == 1 else targets


def _when(said: str, words: QuestionWords) -> str | None:
    """The span the longest time phrase says ("heute Morgen" is today, not "morgen")."""
    said_when = [(len(phrase), when) for when in _WHEN if (phrase := words.said(said, f"time.{when}"))]
    return max(said_when)[1] if said_when else None


def _outside(entity: Entity) -> bool:
    """Whether a sensor's name says it is outside ("Outside temperature", "Außentemperatur")."""
    name = f" {fold(entity.name)} "
    return any(f" {w} " in name or (len(w) > 4 and w in name) for w in every_language("topic.outside"))
