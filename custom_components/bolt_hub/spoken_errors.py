"""What the user hears when the hub does not answer: a sentence in the request's language, from
the integration's translations (`exceptions`; English where a language has none), never a stack
trace or an HTTP status."""

from __future__ import annotations

from homeassistant.core import HomeAssistant
from homeassistant.helpers import translation

from .const import DOMAIN

FALLBACK = "Bolt Hub is not answering right now. Please try again in a moment."


async def spoken_error(hass: HomeAssistant, language: str | None, key: str) -> str:
    """The sentence for `key` (a `HubError.key`) in `language` (HA's "de-CH" reads as "de")."""
    base = (language or hass.config.language or "en").replace("_", "-").split("-")[0].lower()
    strings = await translation.async_get_translations(hass, base, "exceptions", [DOMAIN])
    prefix = f"component.{DOMAIN}.exceptions"
    return strings.get(f"{prefix}.{key}.message") or strings.get(f"{prefix}.failed.message") or FALLBACK
