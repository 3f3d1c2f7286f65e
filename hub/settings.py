"""Settings users change while the hub runs (over MQTT, REST or the web page), kept across restarts.

The options give the defaults; a change made at run time is saved to `settings.json` in the
state folder (hub.state_files) and wins over the option until the option itself changes. A
damaged file is set aside; the values it still holds apply.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Callable, Mapping

from hub.config import validator_for
from hub.llm.types import Reasoning, ReasoningMode
from hub.state_files import JsonStateFile, Reading

# name -> add-on type used to validate a value set at run time
RUNTIME_TYPES = {
    "conversational_mode": "bool",
    "reasoning": "list(on|off|budget)",
    "reasoning_budget": "int(0,8192)",
}


SettingValue = bool | str | int  # a setting's value, as RUNTIME_TYPES validates it
SettingListener = Callable[[str, SettingValue], None]


class SettingsNotSaved(ValueError):
    """The state folder could not be written (a full or read-only disk): nothing was applied."""


@dataclass(frozen=True)
class SettingValues:
    """The settings' values; the options give the defaults."""

    conversational_mode: bool
    reasoning: str
    reasoning_budget: int


class RuntimeSettings:
    def __init__(self, defaults: SettingValues, path: Path | None = None) -> None:
        self._file = JsonStateFile(path, _read_saved, _nothing_saved, lambda saved: saved) if path else None
        self._defaults = asdict(defaults)
        self._values = defaults
        self._listeners: list[SettingListener] = []
        self._load()

    @property
    def conversational_mode(self) -> bool:
        return self._values.conversational_mode

    @property
    def reasoning(self) -> Reasoning:
        return Reasoning(ReasoningMode(self._values.reasoning), self._values.reasoning_budget)

    def as_dict(self) -> dict[str, SettingValue]:
        values: dict[str, SettingValue] = asdict(self._values)
        return values

    def set(self, name: str, value: object) -> SettingValue:
        """Validate, persist, apply. Raises ValueError with a clear message (SettingsNotSaved
        when the state folder cannot be written: then nothing is applied)."""
        return self.update({name: value})[name]

    def update(self, changes: Mapping[str, object]) -> dict[str, SettingValue]:
        """`set` for several settings at once: all are saved and applied, or none."""
        validated = {name: _validated(name, value) for name, value in changes.items()}
        fields: dict[str, Any] = dict(validated)  # validated by RUNTIME_TYPES above
        values = replace(self._values, **fields)
        self._save(values)
        self._values = values
        for name, value in validated.items():
            for listener in list(self._listeners):
                listener(name, value)
        return validated

    def add_listener(self, listener: SettingListener) -> None:
        self._listeners.append(listener)

    def _load(self) -> None:
        saved = (self._file.load() if self._file is not None else None) or {"values": {}, "defaults": {}}
        for name, value in saved["values"].items():
            # a saved value only applies while the option default it overrode is unchanged
            if saved["defaults"].get(name) == self._defaults[name]:
                self._values = replace(self._values, **{name: value})

    def _save(self, values: SettingValues) -> None:
        if self._file is None:
            return
        try:
            self._file.save({"values": asdict(values), "defaults": self._defaults})
        except OSError as err:
            raise SettingsNotSaved(f"the settings could not be saved in {self._file.path.parent} "
                                   f"({err.strerror or err}); nothing was changed") from None


def _read_saved(saved: Any) -> Reading[dict[str, Any]]:
    """The file's values that are valid now (a setting the hub no longer has is left out quietly)."""
    values, problems = {}, []
    for name, value in saved.get("values", {}).items():
        if name in RUNTIME_TYPES:
            try:
                values[name] = validator_for(RUNTIME_TYPES[name])(value)
            except Exception:  # voluptuous raises Invalid subclasses
                problems.append(f"{name} is {value!r}")
    defaults = saved.get("defaults", {})
    if not isinstance(defaults, dict):
        raise TypeError("its defaults are not a mapping")
    return Reading({"values": values, "defaults": defaults}, tuple(problems),
                   "the valid settings it holds apply; the others are back to their options")


def _nothing_saved(text: str | None) -> Reading[dict[str, Any]]:
    return Reading({"values": {}, "defaults": {}}, ("unreadable",), "the settings are back to their options")


def _validated(name: str, value: object) -> SettingValue:
    if name not in RUNTIME_TYPES:
        raise ValueError(f"unknown setting {name!r}")
    try:
        valid: SettingValue = validator_for(RUNTIME_TYPES[name])(value)
        return valid
    except Exception as err:  # voluptuous raises Invalid subclasses
        raise ValueError(f"invalid value for {name}: {err}") from None
