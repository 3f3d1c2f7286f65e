"""The one error a bad custom file (or a bad `tool_secrets` option) raises."""

from __future__ import annotations

from hub.config import ConfigError


class CustomConfigError(ConfigError):
    """The custom file or secrets cannot be used; the message names the file and key path."""
