"""Constants of the Bolt Hub integration."""

from __future__ import annotations

import logging
from typing import Final

DOMAIN: Final = "bolt_hub"
LOGGER = logging.getLogger(__package__)

CONF_URL: Final = "url"
CONF_API_TOKEN: Final = "api_token"  # the hub's HTTP API token (the add-on's discovery carries it)
CONF_TIMEOUT: Final = "timeout"  # seconds a turn may take before the hub counts as not answering
CONF_PERSONA: Final = "persona"  # the hub persona that answers (blank: the hub's default)
CONF_SATELLITE_TIMERS: Final = "satellite_timers"  # timers said to a satellite are HA's own

DEFAULT_TIMEOUT: Final = 60  # above the hub's own turn_timeout (30 s), which answers in words
DEFAULT_SATELLITE_TIMERS: Final = True
# the oldest hub whose API this integration speaks (`awaiting`, `intent`, `changed_entities`)
MIN_HUB_VERSION: Final = "0.6.0"
MANUFACTURER: Final = "Bolt Hub"
