"""Commands for the real stand-ins allowed to act (issue #28 point 5), over the MQTT demo home,
with what an action on each may be: a device and the way it turns, or nothing at all (the home
has no such device). Shared by tests/mqtt/test_fit_real_models.py and bench/bench_fit.py.

The judge is the test's own, independent of the hub's check: an action turns a device "on"
(turn_on, a scene or script, a brightness or a position above 0) or "off" (turn_off, 0), and
"set" when it only sets a value; it fits when its device and way are among the command's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hub.agent.types import TurnResult

ACTIONS = frozenset({"turn_on", "turn_off", "set_light", "set_temperature", "set_position", "media_control",
                     "set_volume", "activate_scene", "run_script"})

DESK, LAMP, KITCHEN = "light.desk_lamp", "light.living_room_lamp", "light.kitchen_light"
COFFEE, FAN, GARAGE = "switch.coffee_maker", "fan.bedroom_fan", "cover.garage_door"
BLINDS, LOCK, HEAT = "cover.bedroom_blinds", "lock.front_door", "climate.thermostat"

NOTHING: tuple[tuple[str, str], ...] = ()
# (language, command, the actions that fit it: (way, entity id))
COMMANDS: list[tuple[str, str, tuple[tuple[str, str], ...]]] = [
    ("en", "turn off the water in the garden", NOTHING),
    ("en", "switch on the desk lamp", (("on", DESK), ("set", DESK))),
    ("en", "switch off the desk lamp", (("off", DESK),)),
    ("en", "turn the kitchen light on", (("on", KITCHEN), ("set", KITCHEN))),
    ("en", "turn the kitchen light off", (("off", KITCHEN),)),
    ("en", "turn off the coffee maker", (("off", COFFEE),)),
    ("en", "switch on the coffee maker", (("on", COFFEE),)),
    ("en", "turn on the bedroom fan", (("on", FAN),)),
    ("en", "turn off the fan", (("off", FAN),)),
    ("en", "open the garage door", (("on", GARAGE), ("set", GARAGE))),
    ("en", "close the garage door", (("off", GARAGE),)),
    ("en", "open the blinds in the bedroom", (("on", BLINDS), ("set", BLINDS))),
    ("en", "close the bedroom blinds", (("off", BLINDS), ("set", BLINDS))),
    ("en", "lock the front door", (("on", LOCK),)),
    ("en", "unlock the front door", (("off", LOCK),)),
    ("en", "turn off the living room lamp", (("off", LAMP),)),
    ("en", "turn on the living room lamp", (("on", LAMP), ("set", LAMP))),
    ("en", "dim the desk lamp to 20 percent", (("on", DESK), ("set", DESK))),
    ("en", "turn off the lights in the kitchen", (("off", KITCHEN),)),
    ("en", "turn on the light in the office", (("on", DESK), ("set", DESK))),
    ("en", "turn off the heating", (("off", HEAT),)),
    ("en", "turn on the water heater", NOTHING),
    ("en", "turn on the garden sprinkler", NOTHING),
    ("en", "open the front gate", NOTHING),
    ("en", "turn off the tv", NOTHING),
    ("en", "lock the back door", NOTHING),
    ("en", "close the kitchen window", NOTHING),
    ("en", "turn on the oven", NOTHING),
    ("en", "turn off the sprinkler in the front yard", NOTHING),
    ("en", "turn the desk lamp off please", (("off", DESK),)),
    ("de", "Schalte die Desk Lamp aus", (("off", DESK),)),
    ("de", "Mach das Licht in der Küche an", (("on", KITCHEN), ("set", KITCHEN))),
    ("de", "Schalte das Licht in der Küche aus", (("off", KITCHEN),)),
    ("de", "Öffne das Garagentor", (("on", GARAGE), ("set", GARAGE))),
    ("de", "Schließe die Rollos im Schlafzimmer", (("off", BLINDS), ("set", BLINDS))),
    ("de", "Schalte den Ventilator aus", (("off", FAN),)),
    ("fr", "Éteins la lumière de la cuisine", (("off", KITCHEN),)),
    ("fr", "Allume la lampe du bureau", (("on", DESK), ("set", DESK))),
    ("fr", "Ferme la porte du garage", (("off", GARAGE),)),
    ("es", "Apaga la luz de la cocina", (("off", KITCHEN),)),
    ("es", "Enciende el ventilador", (("on", FAN),)),
    ("es", "Abre las persianas del dormitorio", (("on", BLINDS), ("set", BLINDS))),
    ("nl", "Doe het licht in de keuken uit", (("off", KITCHEN),)),
    ("nl", "Zet de ventilator aan", (("on", FAN),)),
    ("nl", "Sluit de garagedeur", (("off", GARAGE),)),
]


def way(name: str, arguments: dict[str, Any]) -> str:
    """How an action turns its device: on, off, or set (a value only)."""
    value = arguments.get("brightness", arguments.get("position"))
    if name in ("turn_on", "activate_scene", "run_script") or (name in ("set_light", "set_position") and value):
        return "on" if name != "set_position" or value == 100 else "set"
    if name == "turn_off" or value == 0:
        return "off"
    return "set"


@dataclass
class Tally:
    """Over a set of commands: the device actions that ran, those that did not fit, and the
    calls the hub refused (`does_not_fit`)."""

    commands: int = 0
    ran: int = 0
    fitting: int = 0
    unfitting: list[str] = field(default_factory=list)
    refused: int = 0
    held: int = 0  # waiting for a yes (the policy), so not run

    def add(self, command: str, fits: tuple[tuple[str, str], ...], result: TurnResult) -> None:
        self.commands += 1
        for finished in result.tool_calls:
            if finished.call.name not in ACTIONS:
                continue
            error = finished.data.get("error")
            self.refused += error == "does_not_fit"
            self.held += error == "confirmation_required"
            if not finished.ok:
                continue
            self.ran += 1
            action = (way(finished.call.name, finished.call.arguments), str(finished.call.arguments.get("entity_id")))
            if action in fits or (action[0] == "set" and ("on", action[1]) in fits):
                self.fitting += 1
            else:
                self.unfitting.append(f"{command!r}: {finished.call.name}({finished.call.arguments})")

    def line(self) -> str:
        return (f"{self.commands} commands: {self.ran} actions ran ({self.fitting} fitting, "
                f"{len(self.unfitting)} unfitting), {self.refused} calls refused as not fitting, "
                f"{self.held} held for a yes")
