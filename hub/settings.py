"""Settings users change while the hub runs (over MQTT, REST or the web page), kept across restarts.

The options give the defaults; a change made at run time is saved to `settings.json` in the
state folder and wins over the option until the option itself changes.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Callable

from hub.config import validator_for
from hub.llm.types import Reasoning, ReasoningMode

_LOGGER = logging.getLogger(__name__)

# name -> add-on type used to validate a value set at run time
RUNTIME_TYPES = {
    "conversational_mode": "bool",
    "reasoning": "list(on|off|budget)",
    "reasoning_budget": "int(0,8192)",
}


@dataclass(frozen=True)
class SettingValues:
    """The settings' values; the options give the defaults."""

    conversational_mode: bool
    reasoning: str
    reasoning_budget: int


class RuntimeSettings:
    def __init__(self, defaults: SettingValues, path: Path | None = None) -> None:
        self._path = path
        self._defaults = asdict(defaults)
        self._values = defaults
        self._listeners: list[Callable[[str, Any], None]] = []
        self._load()

    @property
    def conversational_mode(self) -> bool:
        return self._values.conversational_mode

    @property
    def reasoning(self) -> Reasoning:
        return Reasoning(ReasoningMode(self._values.reasoning), self._values.reasoning_budget)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self._values)

    def set(self, name: str, value: Any) -> Any:
        """Validate, apply at once, persist. Raises ValueError with a clear message."""
        if name not in RUNTIME_TYPES:
            raise ValueError(f"unknown setting {name!r}")
        try:
            value = validator_for(RUNTIME_TYPES[name])(value)
        except Exception as err:  # voluptuous raises Invalid subclasses
            raise ValueError(f"invalid value for {name}: {err}") from None
        self._values = replace(self._values, **{name: value})
        self._save()
        for listener in list(self._listeners):
            listener(name, value)
        return value

    def add_listener(self, listener: Callable[[str, Any], None]) -> None:
        self._listeners.append(listener)

    def _load(self) -> None:
        if self._path is None or not self._path.exists():
            return
        try:
            saved = json.loads(self._path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as err:
            _LOGGER.warning("ignoring unreadable %s: %s", self._path, err)
            return
        for name, value in saved.get("values", {}).items():
            # a saved value only applies while the option default it overrode is unchanged
            if name in RUNTIME_TYPES and saved.get("defaults", {}).get(name) == self._defaults[name]:
                try:
                    self._values = replace(self._values, **{name: validator_for(RUNTIME_TYPES[name])(value)})
                except Exception:
                    _LOGGER.warning("ignoring invalid saved setting %s=%r", name, value)

    def _save(self) -> None:
        if self._path is None:
            return
        self._path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self._path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"values": self.as_dict(), "defaults": self._defaults}), encoding="utf-8")
        os.replace(tmp, self._path)
