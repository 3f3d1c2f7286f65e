"""What a recognized request comes to: tool calls (Action), a question answered from state,
"which one?" (Ambiguous), a name the home lacks (NotFound), never mind; and its slots as said."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hassil.recognize import RecognizeResult

from hub.home.entities import Entity


@dataclass
class Action:
    """Tool calls: one per target with `args` (and its entity id), or one call without targets."""

    intent: str
    tool: str
    args: dict[str, Any]
    targets: list[Entity] = field(default_factory=list)
    named: bool = False  # the targets are what a name fits (else a group: a kind, an area, a floor)
    each: dict[str, dict[str, Any]] = field(default_factory=dict)  # entity id → its own arguments
    slots: dict[str, str] = field(default_factory=dict)  # what the template's slots said (`said_slots`)


@dataclass
class Question:
    """A question answered from state (`response` is the template's: one, which, how_many, …)."""

    intent: str
    response: str
    targets: list[Entity]
    state: str | None = None  # the state asked about ("locked"), and how it was said
    state_text: str | None = None
    slots: dict[str, str] = field(default_factory=dict)  # what the template's slots said (`said_slots`)


@dataclass
class Ambiguous:
    intent: str
    candidates: list[Entity]
    action: Action | None = None  # the command to carry out on the one the answer to "which one?" names
    slots: dict[str, str] = field(default_factory=dict)  # what the template's slots said (`said_slots`)


@dataclass
class NotFound:
    intent: str
    name: str
    # the place said ("area" or "floor", its name) when the named device is elsewhere
    place: tuple[str, str] | None = None
    slots: dict[str, str] = field(default_factory=dict)  # what the template's slots said (`said_slots`)


@dataclass
class Nevermind:
    intent: str = "HassNevermind"


Plan = Action | Question | Ambiguous | NotFound | Nevermind


def said_slots(result: RecognizeResult, name_text: str | None = None) -> dict[str, str]:
    """The slots as said ("kitchen"), with the value they stand for when it differs ("kitchen →
    Kitchen"); a name the resolver read (`name_text`) as the name. For a plan's display."""
    said: dict[str, str] = {}
    for key, entity in result.entities.items():
        text, value = str(entity.text).strip(), entity.value
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        shown = str(value) if isinstance(value, (str, int, float)) else text
        said[key] = text if shown in ("", text) else f"{text} → {shown}" if text else shown
    if name_text is not None:
        said["name"] = name_text
    return said
