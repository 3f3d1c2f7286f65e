"""The hub's result as Home Assistant's `IntentResponse`, so that HA's pipeline and automations
see a real outcome: the entities acted on (targets and successes), those whose action failed, a
question answered, or the error (no such device, not understood, the action or the hub failed)
with the hub's spoken reply as its speech."""

from __future__ import annotations

from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers import intent

_ERRORS = {"not_found": intent.IntentResponseErrorCode.NO_VALID_TARGETS,
           "not_understood": intent.IntentResponseErrorCode.NO_INTENT_MATCH,
           "HubMissing": intent.IntentResponseErrorCode.NO_VALID_TARGETS}  # "there is no weather service"
# a call's result that is an answer, not a failure: the hub asked, or the policy said no
_REFUSALS = frozenset({"confirmation_required", "not_allowed", "rate_limited"})
_QUERIES = frozenset({intent.INTENT_GET_STATE, intent.INTENT_TIMER_STATUS, "HassGetWeather",
                      "HassGetCurrentTime", "HassGetCurrentDate", "HassGetTemperature"})
_HUB_QUERY = "Hub"  # the hub's own readings beyond HA's intents: HubDeviceReading, HubListItems, …


def intent_response(hass: HomeAssistant, result: dict[str, Any], language: str) -> intent.IntentResponse:
    """The `IntentResponse` of a hub result (`POST /api/ask`'s JSON, or its `done` event)."""
    response = intent.IntentResponse(language=language)
    reply = str(result.get("reply") or "")
    calls = [c for c in result.get("tool_calls") or [] if isinstance(c, dict)]
    failed = [entity for c in calls if not c.get("ok") and (entity := _entity_of(c))
              and (c.get("result") or {}).get("error") not in _REFUSALS]
    if not result.get("ok"):
        response.async_set_error(intent.IntentResponseErrorCode.FAILED_TO_HANDLE if failed
                                 else intent.IntentResponseErrorCode.UNKNOWN, reply)
        return response
    if (code := _ERRORS.get(str(result.get("intent")))) is not None:
        response.async_set_error(code, reply)
        return response
    changed = list(dict.fromkeys(e for c in calls if c.get("ok") for e in c.get("changed_entities") or []))
    answered = str(result.get("intent") or "")
    if not changed and (answered in _QUERIES or answered.startswith(_HUB_QUERY)):
        response.response_type = intent.IntentResponseType.QUERY_ANSWER
    targets = [_target(hass, entity_id) for entity_id in changed]
    response.async_set_targets(targets)
    response.async_set_results(success_results=targets,
                               failed_results=[_target(hass, e) for e in dict.fromkeys(failed)])
    response.async_set_speech(reply)
    return response


def _entity_of(call: dict[str, Any]) -> str | None:
    for source in (call.get("result"), call.get("arguments")):
        if isinstance(source, dict) and isinstance(source.get("entity_id"), str):
            return str(source["entity_id"])
    return None


def _target(hass: HomeAssistant, entity_id: str) -> intent.IntentResponseTarget:
    state = hass.states.get(entity_id)
    return intent.IntentResponseTarget(name=state.name if state is not None else entity_id,
                                       type=intent.IntentResponseTargetType.ENTITY, id=entity_id)
