"""The measured set of issue #28 point 7: requests in ten languages addressed to a home whose
names are English (bench/data/names_across_languages.yaml), sent through the real agent and
fast path, each scored as carried out (exactly the devices it means, in the direction it says),
a swap (a device acted on that it does not mean) or neither (asked back, not understood)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import yaml

from hub.agent.types import TurnRequest
from hub.home.entities import Entity
from hub.home.policy import CONFIRMATION_REQUIRED
from hub.locales import template
from tests.understanding.harness import SOURCE, Rig, SampleHome

SET_FILE = Path(__file__).resolve().parents[2] / "bench" / "data" / "names_across_languages.yaml"
_ON = {"turn_on", "open_cover", "media_play"}  # the services of "on" / "open"
_OFF = {"turn_off", "close_cover", "media_stop"}


@dataclass(frozen=True)
class Request:
    language: str
    text: str
    direction: str  # "on" (open) or "off" (close)
    entity_ids: frozenset[str]


@dataclass(frozen=True)
class Scored:
    request: Request
    carried_out: bool
    swapped: frozenset[str]  # devices acted on that the request does not mean
    acted: tuple[tuple[str, str], ...]  # (entity id, service) of every call
    reply: str


def _load() -> dict:
    return yaml.safe_load(SET_FILE.read_text(encoding="utf-8"))


def home() -> SampleHome:
    entities = []
    for entity_id, name, area, *device_class in _load()["home"]:
        state = "closed" if entity_id.startswith("cover.") else "off"
        attributes = {"current_position": 0} if entity_id.startswith("cover.") else {}
        entities.append(Entity(entity_id, name, state, attributes, area=area,
                               device_class=device_class[0] if device_class else None, source=SOURCE))
    areas = tuple(dict.fromkeys(e.area for e in entities if e.area))
    return SampleHome("en", tuple(entities), areas, (), {})


def requests(languages: list[str] | None = None) -> Iterator[Request]:
    for language, rows in _load()["requests"].items():
        if languages is None or language in languages:
            for text, direction, *entity_ids in rows:
                yield Request(language, str(text), str(direction), frozenset(entity_ids))


async def score(rig: Rig, request: Request) -> Scored:
    """One request through the agent (its language given, a conversation of its own), the home
    put back after. A sensitive action the hub holds (a garage door) is answered with a yes."""
    rig.backend.calls.clear()
    conversation = f"names-{request.language}-{request.text}"
    result = await rig.agent.ask(TurnRequest(request.text, conversation, language=request.language,
                                             source="rest", client=SOURCE))
    if any(c.data.get("error") == CONFIRMATION_REQUIRED for c in result.tool_calls):
        yes = template(request.language, "policy.yes_words").split("|")[0]
        await rig.agent.ask(TurnRequest(yes, conversation, language=request.language, source="rest",
                                        client=SOURCE))
    acted = tuple((entity_id, service) for entity_id, service, _ in rig.backend.calls)
    services = _ON if request.direction == "on" else _OFF
    right = {entity_id for entity_id, service in acted if service in services}
    swapped = frozenset({entity_id for entity_id, _ in acted} - request.entity_ids)
    carried_out = right == request.entity_ids and len(right) == len(acted)
    for entity in rig.home.entities:
        if rig.store.get(entity.entity_id) != entity:
            rig.store.update_state(entity.entity_id, entity.state, dict(entity.attributes))
    rig.agent.clear_conversations()
    return Scored(request, carried_out, swapped, acted, result.reply)
