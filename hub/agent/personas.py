"""Personas: who the hub speaks as, with which instructions, defaults and tools.

The default persona is the home assistant (`home`): the home's tools, its overview and live
states, the fast path. Other personas (a game's blacksmith, a robot) come from the user's YAML
file (`hub.custom.loader`) and see only their own instructions and the tools they list, so a
persona cannot call another persona's tools, and each persona's system prompt is its own stable
prefix (its own warm cache).

A request picks its persona by name (Wyoming context, MQTT/REST field); otherwise a persona
that lists the request's satellite/device id; otherwise the default.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from hub.llm.types import Reasoning, ReasoningMode

HOME_PERSONA = "home"


class UnknownPersona(LookupError):
    """A request named a persona the configuration does not define."""


@dataclass(frozen=True)
class Persona:
    key: str  # what requests name it by, e.g. "blacksmith"
    name: str  # how it calls itself, e.g. "Brom the blacksmith"
    instructions: str  # its system instructions (the home persona's are the built-in ones)
    language: str | None = None  # None: the request's or the configured language
    conversational: bool | None = None  # None: the runtime setting
    reasoning: Reasoning | None = None  # None: the runtime setting
    tools: tuple[str, ...] | None = None  # None: the home's tools (home persona only)
    home: bool = False  # sees the home overview, live states, fast path and confirmations
    greeting: str | None = None  # what it says when a conversation with it starts
    satellites: tuple[str, ...] = ()  # satellite/device ids that talk to it unless told otherwise
    # "required": every turn's first model round must call one of its tools (a robot whose every
    # request is an action; enforced by a grammar on local models, a JSON schema on remote ones)
    tool_choice: str = "auto"


def home_persona(instructions: str) -> Persona:
    return Persona(key=HOME_PERSONA, name="Bolt", instructions=instructions, home=True)


class PersonaBook:
    """The configured personas, which one a request talks to, and which tools each may use."""

    def __init__(self, home: Persona, others: Iterable[Persona] = (), default: str = HOME_PERSONA,
                 home_tools: Sequence[str] = ()) -> None:
        self._personas: dict[str, Persona] = {home.key: home}
        for persona in others:
            if persona.key in self._personas and persona.key != HOME_PERSONA:
                raise ValueError(f"persona {persona.key!r} defined twice")
            self._personas[persona.key] = persona  # a user's "home" persona replaces the built-in one
        if default not in self._personas:
            raise ValueError(f"default persona {default!r} is not defined; known: {', '.join(self._personas)}")
        self.default = default
        self._home_tools = tuple(home_tools)

    def get(self, key: str | None) -> Persona:
        """The persona named `key` (None: the default). Raises UnknownPersona."""
        if key is None or key == "":
            return self._personas[self.default]
        try:
            return self._personas[key]
        except KeyError:
            raise UnknownPersona(f"no persona named {key!r}; known: {', '.join(self._personas)}") from None

    def choose(self, key: str | None, satellite_id: str | None = None, device_id: str | None = None) -> Persona:
        """The persona a request talks to: named, else mapped from its satellite/device, else the default."""
        if key:
            return self.get(key)
        for persona in self._personas.values():
            if persona.satellites and {satellite_id, device_id} & set(persona.satellites):
                return persona
        return self._personas[self.default]

    def all(self) -> list[Persona]:
        return list(self._personas.values())

    def tool_names(self, persona: Persona) -> tuple[str, ...]:
        """The tools this persona may call: its own list, or the home's tools (plus any it lists)."""
        if persona.tools is None:
            return self._home_tools
        if persona.home:
            return tuple(dict.fromkeys([*self._home_tools, *persona.tools]))
        return persona.tools

    def allows(self, persona: Persona, tool_name: str) -> bool:
        return tool_name in self.tool_names(persona)


def parse_reasoning(mode: str | None, budget: int | None) -> Reasoning | None:
    """A persona's reasoning default from its YAML fields (None when it sets none)."""
    if mode is None:
        return None
    return Reasoning(ReasoningMode(mode), budget if budget is not None else 256)
