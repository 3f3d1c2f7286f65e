"""Timers said to a satellite that shows them (an ESPHome voice satellite registers a timer
handler with HA for its device): HA's own timer intents run them with the satellite's device id,
so its ring and sound follow the timer, and HA's own words answer. Anything else goes to the hub,
whose timers stay its own."""

from __future__ import annotations

from homeassistant.components import conversation
from homeassistant.components.intent import async_device_supports_timers
from homeassistant.core import HomeAssistant
from homeassistant.helpers import intent

TIMER_INTENTS = frozenset({
    intent.INTENT_START_TIMER, intent.INTENT_CANCEL_TIMER, intent.INTENT_CANCEL_ALL_TIMERS,
    intent.INTENT_INCREASE_TIMER, intent.INTENT_DECREASE_TIMER, intent.INTENT_PAUSE_TIMER,
    intent.INTENT_UNPAUSE_TIMER, intent.INTENT_TIMER_STATUS,
})


async def satellite_timer(hass: HomeAssistant, user_input: conversation.ConversationInput) -> intent.IntentResponse | None:
    """HA's response when the request is a timer of HA's for a device with a timer handler
    (HA's own sentences, strictly matched, in the request's language); None otherwise."""
    handle = getattr(conversation, "async_handle_intents", None)  # HA 2024.12+
    if handle is None or not user_input.device_id or not async_device_supports_timers(hass, user_input.device_id):
        return None
    response: intent.IntentResponse | None = await handle(
        hass, user_input, intent_filter=lambda recognized: recognized.intent.name not in TIMER_INTENTS)
    return response
