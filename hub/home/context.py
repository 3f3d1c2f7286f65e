"""The text the model sees about the home: a stable overview and the volatile live states.

The overview sits in the cached prompt prefix, so it must be byte-identical for the same
entities whatever their states: no states, no times, deterministic order. Live states go at
the volatile end of the prompt, and only for the few entities a request is about. A home too
big for the overview (more than OVERVIEW_MAX_ENTITIES) gets no overview: each request then
carries its candidates' ids, names, aliases and areas with their states (`candidate_context`).
"""

from __future__ import annotations

import re
from typing import Any, Callable, Collection, Iterable, Mapping, Sequence

from hub.home.entities import Entity
from hub.home.normalize import fold

NO_AREA = "No area"
# Up to this many entities the overview goes into the stable prompt; above, each request carries
# its candidates with `candidate_context` instead (first-token time stays flat as homes grow).
OVERVIEW_MAX_ENTITIES = 60
_SPACES = re.compile(r"\s+")
# Device classes worth telling apart when the name does not say it (what a sensor measures).
_CLASSED_DOMAINS = {"sensor", "binary_sensor", "cover"}


def entity_overview(
    entities: Iterable[Entity], area_aliases: Mapping[str, Sequence[str]] | None = None
) -> str:
    """One line per entity, grouped by area: `light.kitchen "Kitchen light" (alias, alias)`.

    Ids stay whole: the model copies them into its calls (and prompt-lookup drafting copies
    them from here). The name is left out when it is just the entity id's words
    ("light.desk_lamp" for "Desk lamp"); a sensor's or cover's device class is added in
    brackets when its name does not say it. Area lines carry the area's aliases:
    `Kitchen (Küche, cuisine):`.
    """
    return _by_area(entities, area_aliases or {},
                    lambda members: [f"{_named_id(e)}{_details(e)}" for e in members])


def candidate_context(
    entities: Iterable[Entity], area_aliases: Mapping[str, Sequence[str]] | None = None,
    detailed: Collection[str] | None = None,
) -> str:
    """The overview's lines with each entity's live state: `light.kitchen "Kitchen light": off`.

    For the few candidates of one request in a home too big for the overview (volatile text:
    it goes at the end of the prompt). Only the `detailed` ones (default: all; the agent's
    best matches, which the grammar offers) get aliases and their area; the others follow as
    `id "name": state`, so every candidate stays callable for fewer tokens.
    """
    entities = list(entities)
    chosen = [e for e in entities if detailed is None or e.entity_id in detailed]
    others = sorted((e for e in entities if detailed is not None and e.entity_id not in detailed),
                    key=lambda e: e.entity_id)
    text = _by_area(chosen, area_aliases or {},
                    lambda members: [f"{_named_id(e)}{_details(e)}: {state_text(e)}" for e in members])
    if others:
        lines = [f"{_named_id(e)}: {state_text(e)}" for e in others]
        text = "\n".join(([text] if text else []) + ["Other candidates:", *lines])
    return text


def live_states(entities: Iterable[Entity]) -> str:
    """Current state and key attributes, one line each: `light.kitchen: on, brightness 80%`."""
    return "\n".join(f"{e.entity_id}: {state_text(e)}" for e in sorted(entities, key=lambda e: e.entity_id))


def state_text(entity: Entity) -> str:
    """State and key attributes: `on, brightness 80%`."""
    attributes = key_attributes(entity)
    unit = attributes.pop("unit", None)
    parts = [_clean(f"{entity.state} {unit}" if unit else entity.state)]
    parts += [_attribute_text(key, value) for key, value in attributes.items()]
    return ", ".join(parts)


def key_attributes(entity: Entity) -> dict[str, Any]:
    """The attributes that matter for talking about an entity, with percentages 0–100."""
    attrs = entity.attributes
    found: dict[str, Any] = {}
    if entity.domain == "light" and entity.state == "on":
        if isinstance(attrs.get("brightness"), (int, float)):
            found["brightness"] = round(attrs["brightness"] * 100 / 255)
        if attrs.get("rgb_color"):
            found["rgb_color"] = list(attrs["rgb_color"])
    elif entity.domain == "climate":
        for key in ("temperature", "current_temperature", "hvac_action"):
            if attrs.get(key) is not None:
                found[key] = attrs[key]
    elif entity.domain in ("cover", "valve"):
        if attrs.get("current_position") is not None:
            found["position"] = attrs["current_position"]
    elif entity.domain == "media_player":
        if isinstance(attrs.get("volume_level"), (int, float)):
            found["volume"] = round(attrs["volume_level"] * 100)
        for key in ("media_title", "media_artist"):
            if attrs.get(key):
                found[key] = attrs[key]
    elif entity.domain == "fan" and attrs.get("percentage") is not None:
        found["speed"] = attrs["percentage"]
    if attrs.get("unit_of_measurement"):
        found["unit"] = attrs["unit_of_measurement"]
    return found


def _by_area(
    entities: Iterable[Entity], area_aliases: Mapping[str, Sequence[str]],
    area_lines: Callable[[list[Entity]], list[str]],
) -> str:
    """An `Area (aliases):` line, then `area_lines` of its entities (sorted by id), per area."""
    by_area: dict[str, list[Entity]] = {}
    for entity in entities:
        by_area.setdefault(_clean(entity.area) if entity.area else "", []).append(entity)
    lines: list[str] = []
    for area in sorted(by_area, key=lambda a: (a == "", fold(a), a)):
        aliases = [_clean(a) for a in area_aliases.get(area, ()) if _clean(a)]
        title = area or NO_AREA
        lines.append(f"{title} ({', '.join(aliases)}):" if aliases else f"{title}:")
        lines.extend(area_lines(sorted(by_area[area], key=lambda e: e.entity_id)))
    return "\n".join(lines)


def _named_id(entity: Entity) -> str:
    """`light.kitchen "Kitchen light"`; the name is left out when it is just the id's words."""
    name = _clean(entity.name)
    object_words = entity.entity_id.split(".", 1)[-1].replace("_", " ")
    return f'{entity.entity_id} "{name}"' if name and fold(name) != fold(object_words) else entity.entity_id


def _details(entity: Entity) -> str:
    """` [device class] (alias, alias)`: the class when the name does not say it."""
    name = _clean(entity.name)
    text = ""
    if entity.device_class and entity.domain in _CLASSED_DOMAINS and \
            fold(entity.device_class) not in fold(name):
        text += f" [{entity.device_class}]"
    aliases = [_clean(a) for a in entity.aliases if _clean(a)]
    if aliases:
        text += f" ({', '.join(aliases)})"
    return text


def _attribute_text(key: str, value: Any) -> str:
    if key in ("brightness", "position", "volume", "speed"):
        return f"{key} {value}%"
    if key in ("media_title", "media_artist"):
        return f'{key.split("_", 1)[1]} "{_clean(str(value))}"'
    if key == "rgb_color":
        return "color rgb(" + ",".join(str(v) for v in value) + ")"
    if key == "temperature":
        return f"target {value}°"
    if key == "current_temperature":
        return f"current {value}°"
    return f"{key.replace('_', ' ')} {_clean(str(value))}"


def _clean(text: str) -> str:
    """Names and states are data: one line, no quotes that could end a quoted name."""
    return _SPACES.sub(" ", str(text)).replace('"', "'").strip()
