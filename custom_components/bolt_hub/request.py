"""One turn as the hub's `POST /api/ask` takes it, from Home Assistant's conversation input and
registries: the text, HA's conversation id, the language, the device and satellite it was said
at, that place's area and floor (the satellite entity's area first, else its device's, as HA's
own LLM context reads them), and the extra system prompt of the conversation."""

from __future__ import annotations

import re
from typing import Any

from homeassistant.components import conversation
from homeassistant.core import HomeAssistant
from homeassistant.helpers import area_registry as ar, device_registry as dr, entity_registry as er, floor_registry as fr

MAX_EXTRA_PROMPT_CHARS = 4000  # the hub's limit (rest_schema.MAX_EXTRA_PROMPT_CHARS)
_LANGUAGE = re.compile(r"^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8}){0,3}$")
SATELLITE_DOMAIN = "assist_satellite"


def turn_body(hass: HomeAssistant, user_input: conversation.ConversationInput, chat_log: conversation.ChatLog,
              persona: str | None) -> dict[str, Any]:
    """The body of `POST /api/ask` for this turn (keeps the conversation's extra prompt in
    `chat_log`, as HA's LLM agents do, so later turns of it carry it too)."""
    body: dict[str, Any] = {"text": user_input.text, "conversation_id": chat_log.conversation_id}
    if user_input.language and _LANGUAGE.match(user_input.language):
        body["language"] = user_input.language
    device_id = user_input.device_id
    # HA 2025.9+ names the satellite; before, the device's assist_satellite entity is it
    satellite_id = getattr(user_input, "satellite_id", None) or satellite_of(hass, device_id)
    area, floor = speaker_place(hass, device_id, satellite_id)
    extra = user_input.extra_system_prompt or chat_log.extra_system_prompt
    chat_log.extra_system_prompt = extra
    fields = {"device_id": device_id, "satellite_id": satellite_id, "area": area, "floor": floor,
              "extra_system_prompt": extra[:MAX_EXTRA_PROMPT_CHARS] if extra else None, "persona": persona}
    body.update({key: value for key, value in fields.items() if value})
    return body


def satellite_of(hass: HomeAssistant, device_id: str | None) -> str | None:
    """The assist_satellite entity of a device (a voice satellite), or None."""
    if not device_id:
        return None
    entries = er.async_entries_for_device(er.async_get(hass), device_id)
    return next((e.entity_id for e in entries if e.domain == SATELLITE_DOMAIN), None)


def speaker_place(hass: HomeAssistant, device_id: str | None, satellite_id: str | None) -> tuple[str | None, str | None]:
    """The names of the area and floor a request was said in (None where HA knows none)."""
    area_id = None
    if satellite_id and (entity := er.async_get(hass).async_get(satellite_id)) is not None:
        area_id = entity.area_id
        device_id = device_id or entity.device_id
    if area_id is None and device_id and (device := dr.async_get(hass).async_get(device_id)) is not None:
        area_id = device.area_id
    area = ar.async_get(hass).async_get_area(area_id) if area_id else None
    if area is None:
        return None, None
    floor = fr.async_get(hass).async_get_floor(area.floor_id) if area.floor_id else None
    return area.name, floor.name if floor is not None else None
