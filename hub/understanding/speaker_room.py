"""The speaker's room in understanding, used as Home Assistant's default agent uses it.

HA passes the satellite's area to hassil as `intent_context`: templates that require an area as
context ("turn on the lights", "close the blinds in here", "pause") match, with the speaker's
area in their `area` slot. A name several devices share means the one in the speaker's area,
else the one on its floor (HA's `MatchTargetsPreferences`). Beyond HA: a media command with no
name and no player in the room goes to the players on the room's floor; and a command the room
cannot carry out is understood as it would be without one ("what is the temperature" in a room
without a thermostat is the home's one thermostat).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

from hassil.models import MatchEntity
from hassil.recognize import RecognizeResult

from hub.home.normalize import fold
from hub.home.places import nearest
from hub.understanding.plans import Ambiguous, Plan

_SPEAKER = "speaker_area"  # the metadata marking an area slot filled from the speaker's room


@dataclass(frozen=True)
class Room:
    """Where the request was spoken (ToolContext.area / floor); both None: unknown."""

    area: str | None = None
    floor: str | None = None
    floor_areas: frozenset[str] = frozenset()  # the areas on that floor

    def context(self) -> dict[str, Any] | None:
        """The room as hassil's `intent_context`."""
        if not self.area:
            return None
        return {"area": {"value": self.area, "text": self.area, "metadata": {_SPEAKER: True}}}


Recognizer = Callable[[dict[str, Any] | None], list[RecognizeResult]]  # intent context → results
PlanOf = Callable[[list[RecognizeResult]], Plan | None]


def plan_in_room(recognize_in: Recognizer, plan_of: PlanOf, room: Room) -> tuple[list[RecognizeResult], Plan | None]:
    """The results for the text in `room` and their plan: in the room; a media command on the
    room's floor; else as the text means without a room."""
    results = recognize_in(room.context())
    plan = plan_of(results)
    if plan is None and room.area:
        upstairs = [on_floor(r, room.floor) for r in results if room.floor and _media_here(r)]
        plan = plan_of(upstairs) if upstairs else None
        if plan is None:
            results = recognize_in(None)
            plan = plan_of(results)
    return results, plan


def prefer_room(plan: Plan, room: Room) -> Plan:
    """An Ambiguous plan whose options all bear one name, decided by the room: the one in the
    speaker's area, else the one on its floor. Options with different names still ask."""
    if not isinstance(plan, Ambiguous) or plan.action is None or not room.area:
        return plan
    if len({fold(e.name) for e in plan.candidates}) != 1:
        return plan
    chosen = nearest(plan.candidates, room.area, room.floor_areas)
    return replace(plan.action, targets=chosen) if len(chosen) == 1 else plan  # several: ask which one


def on_floor(result: RecognizeResult, floor: str | None) -> RecognizeResult:
    """`result` with the speaker's area widened to the floor it is on."""
    entities = {k: v for k, v in result.entities.items() if k != "area"}
    if floor:
        entities["floor"] = MatchEntity(name="floor", value=floor, text=floor)
    return replace(result, entities=entities)


def _media_here(result: RecognizeResult) -> bool:
    area = result.entities.get("area")
    return result.intent.name.startswith(("HassMedia", "HassSetVolume")) and "name" not in result.entities \
        and area is not None and bool((area.metadata or {}).get(_SPEAKER))
