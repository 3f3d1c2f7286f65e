"""A home built like a real one (issue #40, bench/data/real_home.yaml) and the commands said to it
(bench/data/real_home_requests.yaml): devices with their battery, signal, power and meter
entities, two vacuums and a lawn mower on three floors, two irrigation valves named alike, locks,
media players of which one plays, two to-do lists (a task list and a shop's) — every name
English, as integrations write them.

`home()` is the home as the hub reads it from Home Assistant's registries (entity category,
device, area, floor); `RealHomeBackend` carries calls out as HA's integrations would (a lock
that jams, a vacuum that cannot clean one room: HA 2025.4 has no such action; local_todo's
items). `score` sends one
request through the real agent and judges it: carried out (exactly the calls expected, as HA's
handler would make them), or one honest question naming exactly the candidates expected.
Used by tests/home/test_real_home.py, bench/bench_names.py and tests/ha/test_e2e_real_home.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Iterator

import yaml

from hub.agent.types import TurnRequest
from hub.home.entities import ActionRejected, BackendError, Entity
from hub.home.policy import CONFIRMATION_REQUIRED
from hub.locales import template
from tests.understanding.harness import SOURCE, RecordingBackend, Rig, SampleHome

DATA = Path(__file__).resolve().parents[2] / "bench" / "data"
HOME_FILE, REQUESTS_FILE = DATA / "real_home.yaml", DATA / "real_home_requests.yaml"
POINTS = {"1": "kinds before names", "2": "verbs where people put them", "3": "names by place and role",
          "4": "lists by what people call them", "5": "names across languages", "6": "a failed call says why"}
_MEDIA_ATTRIBUTES = {"volume_level": 0.3, "is_volume_muted": False, "supported_features": 152511}


@lru_cache(maxsize=None)
def _home_data() -> dict[str, Any]:
    return yaml.safe_load(HOME_FILE.read_text(encoding="utf-8"))


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


@dataclass(frozen=True)
class Part:
    """One entity of a device, as discovery announces it."""

    device: dict[str, Any]
    component: str
    suffix: str | None
    options: dict[str, Any]

    @property
    def entity_id(self) -> str:
        key = self.device["key"]
        return f"{self.component}.{key}_{slug(self.suffix)}" if self.suffix else f"{self.component}.{key}"

    @property
    def name(self) -> str:
        return f"{self.device['name']} {self.suffix}" if self.suffix else str(self.device["name"])


def parts() -> list[Part]:
    return [Part(device, component, suffix, options or {}) for device in _home_data()["devices"]
            for component, suffix, options in device["entities"]]


def media_players() -> list[tuple[str, str, str, str]]:
    """(entity id, name, area, state) of each media player."""
    return [(f"media_player.{key}", name, area, state) for key, name, area, state in _home_data()["media"]]


def todo_lists() -> list[tuple[str, str, tuple[str, ...]]]:
    """(entity id, name, items still to do) of each to-do list."""
    return [(entity_id, name, tuple(items)) for entity_id, name, items in _home_data()["lists"]]


def floors() -> dict[str, dict[str, Any]]:
    return dict(_home_data()["floors"])


def _entity(part: Part) -> Entity:
    options = part.options
    state = str(options.get("state", "unknown" if part.component == "button" else "off"))
    attributes = dict(options.get("attributes") or {})
    if "unit" in options:
        attributes["unit_of_measurement"] = options["unit"]
    if part.component in ("cover", "valve"):
        attributes["current_position"] = 100 if state == "open" else 0
    return Entity(part.entity_id, part.name, state, attributes, area=part.device["area"],
                  device_class=options.get("device_class"), source=SOURCE, device_id=part.device["key"],
                  entity_category=options.get("category"))


def home() -> SampleHome:
    entities = [_entity(part) for part in parts()]
    entities += [Entity(entity_id, name, state, dict(_MEDIA_ATTRIBUTES), area=area, source=SOURCE,
                        device_class="tv" if "TV" in name else "speaker")
                 for entity_id, name, area, state in media_players()]
    entities += [Entity(entity_id, name, str(len(items)), {"supported_features": 15}, source=SOURCE)
                 for entity_id, name, items in todo_lists()]
    area_floor = {area: floor for floor, spec in floors().items() for area in spec["areas"]}
    return SampleHome("en", tuple(entities), tuple(area_floor), tuple(floors()), area_floor)


def floor_aliases() -> dict[str, tuple[str, ...]]:
    return {floor: tuple(spec.get("aliases") or ()) for floor, spec in floors().items()}


def jamming() -> frozenset[str]:
    return frozenset(p.entity_id for p in parts() if p.options.get("jams"))


class RealHomeBackend(RecordingBackend):
    """HA's integrations as the hub sees them through HA 2025.4: a lock that jams, a lawn mower,
    buttons, no action to clean one room, and local_todo's lists (`items`: each list's items,
    summary → status, as `todo.get_items` answers)."""

    def __init__(self, store: Any) -> None:
        super().__init__(store)
        self.items: dict[str, dict[str, str]] = {}
        self.reset_lists()

    def reset_lists(self) -> None:
        self.items = {entity_id: dict.fromkeys(items, "needs_action") for entity_id, _, items in todo_lists()}

    async def service_response(self, entity: Entity, service: str, data: dict[str, Any]) -> dict[str, Any]:
        if service != "get_items":
            raise BackendError(f"{entity.domain}.{service} answers nothing")
        wanted = data.get("status")
        statuses = {wanted} if isinstance(wanted, str) else set(wanted or ("needs_action", "completed"))
        return {entity.entity_id: {"items": [{"summary": summary, "status": status}
                                             for summary, status in self.items[entity.entity_id].items()
                                             if status in statuses]}}

    def _todo(self, entity: Entity, service: str, data: dict, attrs: dict) -> tuple[str, dict]:
        items, item = self.items[entity.entity_id], str(data.get("item", ""))
        found = next((s for s in items if s.casefold() == item.casefold()), "")
        if service not in ("add_item", "update_item", "remove_item"):
            raise BackendError(f"todo.{service} is not supported by {entity.entity_id}")
        if service != "add_item" and not found:
            raise ActionRejected(f"Unable to find to-do list item: {item}")
        if service == "add_item":
            items[item] = "needs_action"
        elif service == "update_item":
            items[found] = str(data.get("status", items[found]))
        else:
            del items[found]
        return str(sum(status == "needs_action" for status in items.values())), attrs

    def _lock(self, entity: Entity, service: str, data: dict[str, Any], attrs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        state, attrs = super()._lock(entity, service, data, attrs)
        return ("jammed" if state == "locked" and entity.entity_id in jamming() else state), attrs

    def _vacuum(self, entity: Entity, service: str, data: dict, attrs: dict) -> tuple[str, dict]:
        if service == "clean_area":  # HA 2025.4 answers 400: no such action
            raise ActionRejected("Home Assistant rejected POST /services/vacuum/clean_area (HTTP 400): "
                                 "400: Bad Request")
        return super()._vacuum(entity, service, data, attrs)

    def _lawn_mower(self, entity: Entity, service: str, data: dict, attrs: dict) -> tuple[str, dict]:
        states = {"start_mowing": "mowing", "dock": "docked", "pause": "paused"}
        if service not in states:
            raise BackendError(f"lawn_mower.{service} is not supported by {entity.entity_id}")
        return states[service], attrs

    def _button(self, entity: Entity, service: str, data: dict, attrs: dict) -> tuple[str, dict]:
        if service != "press":
            raise BackendError(f"button.{service} is not supported by {entity.entity_id}")
        return "2026-12-06T12:00:00+00:00", attrs


# --- requests ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    point: str
    language: str
    text: str
    calls: tuple[tuple[str, str, tuple[tuple[str, Any], ...]], ...]  # (entity id, service, data)
    ask: frozenset[str]  # a question naming exactly these (nothing done)
    says: str = ""  # words the reply must hold (point 6: why it failed)


def _expectation(spec: dict[str, Any]) -> tuple[tuple[tuple[str, str, tuple[tuple[str, Any], ...]], ...], frozenset[str], str]:
    ask = frozenset(spec.get("ask") or ())
    says = str(spec.get("says") or "")
    calls = []
    for entity_id, wanted in spec.items():
        if entity_id in ("ask", "says"):
            continue
        if isinstance(wanted, list):  # [service, {key: value}]: values with spaces (a list's item)
            service, data = str(wanted[0]), tuple(sorted(dict(wanted[1]).items()))
        else:
            service, *pairs = str(wanted).split()
            data = tuple(sorted((key, yaml.safe_load(value)) for key, value in (p.split("=", 1) for p in pairs)))
        calls.append((entity_id, service, data))
    return tuple(sorted(calls)), ask, says


@lru_cache(maxsize=None)
def _requests_data() -> dict[str, Any]:
    return yaml.safe_load(REQUESTS_FILE.read_text(encoding="utf-8"))


def requests(points: tuple[str, ...] | None = None, languages: tuple[str, ...] | None = None) -> Iterator[Request]:
    for point, by_language in _requests_data().items():
        if points is not None and str(point) not in points:
            continue
        for language, rows in by_language.items():
            if languages is None or language in languages:
                for text, spec in rows:
                    calls, ask, says = _expectation(spec)
                    yield Request(str(point), language, str(text), calls, ask, says)


@dataclass(frozen=True)
class Scored:
    request: Request
    ok: bool
    why: str
    reply: str
    path: str
    asked: frozenset[str] = frozenset()  # the candidates of the question it asked


def rig(extra_entities: Iterable[Entity] = ()) -> Rig:
    """The agent over the real home (its backend as HA's integrations act), with `extra_entities`
    (a bench's generated home) beside it."""
    built = Rig(home(), floor_aliases=floor_aliases(), extra_entities=extra_entities)
    built.backend = RealHomeBackend(built.store)
    built.store.register_backend(SOURCE, built.backend)
    return built


async def score(rig: Rig, request: Request, give_language: bool = True) -> Scored:
    """One request through the agent, in a conversation of its own, the home put back after; a
    sensitive action the hub holds (the garage door) is answered with a yes. `give_language`:
    False leaves the hub to tell the language (HA 2025.4 sends none)."""
    rig.backend.calls.clear()
    conversation = f"real-{request.point}-{request.language}-{request.text}"
    language = request.language if give_language else None
    result = await rig.agent.ask(TurnRequest(request.text, conversation, language=language,
                                             source="rest", client=SOURCE))
    if any(c.data.get("error") == CONFIRMATION_REQUIRED for c in result.tool_calls):
        yes = template(request.language, "policy.yes_words").split("|")[0]
        await rig.agent.ask(TurnRequest(yes, conversation, language=request.language, source="rest", client=SOURCE))
    done = tuple(sorted((e, s, tuple(sorted((k, v) for k, v in d.items() if k != "entity_id")))
                        for e, s, d in rig.backend.calls))
    asked = frozenset(e.entity_id for e in rig.fast_path.unfinished(conversation))
    ok, why = _judged(request, done, asked, result.reply)
    if isinstance(rig.backend, RealHomeBackend):
        rig.backend.reset_lists()
    for entity in rig.home.entities:
        if rig.store.get(entity.entity_id) != entity:
            rig.store.update_state(entity.entity_id, entity.state, dict(entity.attributes))
    rig.agent.clear_conversations()
    return Scored(request, ok, why, result.reply, result.path, asked)


def _judged(request: Request, done: tuple, asked: frozenset[str], reply: str) -> tuple[bool, str]:
    """Carried out: the calls expected, each with (at least) the data expected; else the question
    expected, naming exactly its candidates; and the words the reply must say."""
    if request.says and request.says.casefold() not in reply.casefold():
        return False, f"the reply does not say {request.says!r}"
    if request.ask:
        if done:
            return False, f"a question acted: {list(done)}"
        return asked == request.ask, "" if asked == request.ask else f"asked about {sorted(asked)}"

    def fits(call: tuple, wanted: tuple) -> bool:
        data = dict(call[2])
        return call[:2] == wanted[:2] and all(_same(data.get(key), value) for key, value in wanted[2])

    if len(done) == len(request.calls) and all(fits(c, w) for c, w in zip(done, request.calls)):
        return True, ""
    return False, f"did {list(done)}" + (f", asked about {sorted(asked)}" if asked else "")


def _same(value: Any, wanted: Any) -> bool:
    """Equal; text in any case (a list's item is written as it was said)."""
    if isinstance(value, str) and isinstance(wanted, str):
        return value.casefold() == wanted.casefold()
    return bool(value == wanted)


def sibling_questions(home: SampleHome, scored: Iterable[Scored]) -> list[tuple[str, list[str]]]:
    """The questions that named two entities of one device ("Smart Curtain or Smart Curtain
    Battery?"): issue #40 wants none."""
    devices = {e.entity_id: e.device_id for e in home.entities}
    found = []
    for s in scored:
        owners = [devices[i] for i in s.asked if devices.get(i)]
        if len(owners) != len(set(owners)):
            found.append((s.request.text, sorted(s.asked)))
    return found
