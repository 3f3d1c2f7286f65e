"""Relative commands' arithmetic: a step up or down of a device's level, from its current state.

"Brighter", "a bit warmer", "much louder", "open it a bit more": the new level is the entity's
current one (hub.home.entities: brightness 0–255, a thermostat's target, volume 0–1, a cover's
position) moved by one step of the amount said, clamped to what the device takes, and carried
out through the existing tools (set_light, set_temperature, set_volume, set_position), so their
checks and the policy stay in one place. A thermostat steps by its `target_temp_step` (one
degree of its unit when it has none).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TypeGuard

from hub.home.entities import Entity


@dataclass(frozen=True)
class Quantity:
    """A level the hub changes by steps: the domains that have it, the tool and its argument."""

    domains: frozenset[str]
    tool: str
    arg: str
    steps: tuple[float, float, float]  # small, normal, large (a thermostat: in its own steps)
    low: float = 0.0
    high: float = 100.0


QUANTITIES: dict[str, Quantity] = {
    "brightness": Quantity(frozenset({"light"}), "set_light", "brightness", (10, 20, 40), low=1),
    "temperature": Quantity(frozenset({"climate"}), "set_temperature", "temperature", (1, 1, 2),
                            low=-math.inf, high=math.inf),
    "volume": Quantity(frozenset({"media_player"}), "set_volume", "volume", (5, 10, 20)),
    "position": Quantity(frozenset({"cover", "valve"}), "set_position", "position", (10, 25, 50)),
}
_AMOUNTS = {"small": 0, "normal": 1, "large": 2}


def quantity_of(entity: Entity) -> str | None:
    """The level "turn it up" changes on this kind of device."""
    return next((name for name, q in QUANTITIES.items() if entity.domain in q.domains), None)


def current(entity: Entity, quantity: str) -> float | None:
    """The entity's level now, in the tool's unit (percent, degrees); None when it has none the
    hub can change (an on/off-only light, a player that reports no volume)."""
    attrs = entity.attributes
    if entity.domain not in QUANTITIES[quantity].domains:
        return None
    if quantity == "brightness":
        if set(attrs.get("supported_color_modes") or ()) == {"onoff"}:
            return None
        level = attrs.get("brightness")
        return 0.0 if entity.state != "on" else round(float(level) * 100 / 255) if _number(level) else 100.0
    if quantity == "temperature":
        target = attrs.get("temperature")
        return float(target) if _number(target) else None
    if quantity == "volume":
        level = attrs.get("volume_level")
        return round(float(level) * 100) if _number(level) else None
    position = attrs.get("current_position")
    if _number(position):
        return float(position)
    return {"open": 100.0, "closed": 0.0}.get(entity.state)


def switches_on(entity: Entity, quantity: str, direction: int) -> bool:
    """Whether "brighter" means switching this light on: it is off and has no level to step."""
    return quantity == "brightness" and direction > 0 and entity.domain == "light" \
        and entity.state == "off" and current(entity, quantity) is None


def stepped(entity: Entity, quantity: str, direction: int, amount: str) -> float | None:
    """The level one step of `amount` ("small", "normal", "large") up (`direction` 1) or down
    (-1) from the current one, clamped to the device's range; None when it has no such level."""
    now = current(entity, quantity)
    if now is None:
        return None
    spec = QUANTITIES[quantity]
    step = spec.steps[_AMOUNTS.get(amount, 1)]
    if quantity == "temperature":
        unit = entity.attributes.get("target_temp_step")
        unit = float(unit) if _number(unit) and float(unit) > 0 else 1.0
        low = entity.attributes.get("min_temp", spec.low)
        high = entity.attributes.get("max_temp", spec.high)
        value = min(max(round((now + direction * step * unit) / unit) * unit, float(low)), float(high))
    else:
        value = float(min(max(now + direction * step, spec.low), spec.high))
    return value if (value - now) * direction >= 0 else now  # never the wrong way (dimming an off light)


def as_argument(quantity: str, value: float) -> float | int:
    """The tool's argument: whole percent, degrees as they are."""
    return value if quantity == "temperature" else int(round(value))


def _number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
