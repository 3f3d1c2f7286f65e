"""The hub as a conversation agent: each turn goes to its HTTP API with the speaker's place; its
reply, its tool calls and what it waits for come back into HA's chat log and pipeline.

- Follow-up listening: a reply that waits for an answer (a yes to a held action, "which one?",
  a question) sets `continue_conversation`, so a satellite listens again at once and the answer
  comes back in the same conversation.
- Streaming (HA 2025.6+, `supports_streaming`): the hub's server-sent sentences go into the chat
  log as they come, so HA's text-to-speech starts before the reply ends. Older HA gets the whole
  reply at once. Detected from HA itself, not its version number.
- Timers said to a satellite that shows them are HA's own (timers.py).
- A hub that does not answer is a spoken error in the request's language (spoken_errors.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Literal

from homeassistant.components import conversation
from homeassistant.const import MATCH_ALL
from homeassistant.core import HomeAssistant
from homeassistant.helpers import intent
from homeassistant.helpers.device_registry import DeviceEntryType, DeviceInfo
from homeassistant.helpers.entity_platform import AddEntitiesCallback

from . import BoltHubConfigEntry
from .chat_content import record_tool_call
from .const import CONF_PERSONA, CONF_SATELLITE_TIMERS, CONF_URL, DEFAULT_SATELLITE_TIMERS, DOMAIN, LOGGER, MANUFACTURER
from .hub_client import HubAuthFailed, HubError
from .request import turn_body
from .response import intent_response
from .spoken_errors import spoken_error
from .timers import satellite_timer

# HA 2025.6+ speaks a streaming entity's chat-log deltas as they come
STREAMING = hasattr(conversation.ConversationEntity, "_attr_supports_streaming")


async def async_setup_entry(hass: HomeAssistant, entry: BoltHubConfigEntry,
                            async_add_entities: AddEntitiesCallback) -> None:
    """The entry's conversation agent."""
    async_add_entities([BoltHubConversationEntity(entry)])


class BoltHubConversationEntity(conversation.ConversationEntity, conversation.AbstractConversationAgent):
    """Bolt Hub as a conversation agent."""

    _attr_has_entity_name = True
    _attr_name = None
    _attr_supported_features = conversation.ConversationEntityFeature.CONTROL
    _attr_supports_streaming = True  # read by HA 2025.6+ only

    def __init__(self, entry: BoltHubConfigEntry) -> None:
        self.entry = entry
        self._attr_unique_id = entry.entry_id
        self._attr_device_info = DeviceInfo(
            identifiers={(DOMAIN, entry.entry_id)}, name=entry.title, manufacturer=MANUFACTURER,
            sw_version=entry.runtime_data.version, entry_type=DeviceEntryType.SERVICE,
            configuration_url=entry.data[CONF_URL])

    @property
    def supported_languages(self) -> list[str] | Literal["*"]:
        """The hub tells a request's language from its words: any."""
        return MATCH_ALL

    async def _async_handle_message(self, user_input: conversation.ConversationInput,
                                    chat_log: conversation.ChatLog) -> conversation.ConversationResult:
        """One turn: HA's timer for a satellite that shows it, else the hub's answer."""
        if self.entry.options.get(CONF_SATELLITE_TIMERS, DEFAULT_SATELLITE_TIMERS):
            timer = await satellite_timer(self.hass, user_input)
            if timer is not None:
                speech = timer.speech.get("plain", {}).get("speech", "")
                chat_log.async_add_assistant_content_without_tools(
                    conversation.AssistantContent(agent_id=self.entity_id, content=speech))
                return conversation.ConversationResult(response=timer, conversation_id=chat_log.conversation_id)
        body = turn_body(self.hass, user_input, chat_log, self.entry.options.get(CONF_PERSONA) or None)
        try:
            result = await (self._streamed(body, chat_log) if STREAMING else self._whole(body, chat_log))
        except HubError as err:
            return await self._not_answered(err, user_input, chat_log)
        if hasattr(chat_log, "async_trace"):
            chat_log.async_trace({"bolt_hub": {key: result.get(key) for key in
                                               ("path", "intent", "awaiting", "ok", "error", "timings")}})
        return conversation.ConversationResult(
            response=intent_response(self.hass, result, user_input.language),
            conversation_id=chat_log.conversation_id,
            continue_conversation=result.get("awaiting") is not None)

    async def _whole(self, body: dict[str, Any], chat_log: conversation.ChatLog) -> dict[str, Any]:
        """The hub's whole result at once: its calls, then its reply, into the chat log."""
        result = await self.entry.runtime_data.client.ask(body)
        for finished in result.get("tool_calls") or []:
            record_tool_call(chat_log, self.entity_id, finished)
        chat_log.async_add_assistant_content_without_tools(
            conversation.AssistantContent(agent_id=self.entity_id, content=str(result.get("reply") or "")))
        return result

    async def _streamed(self, body: dict[str, Any], chat_log: conversation.ChatLog) -> dict[str, Any]:
        """The hub's reply sentence by sentence into the chat log as it comes; its result."""
        done: dict[str, Any] = {}
        said: list[str] = []
        async for _content in chat_log.async_add_delta_content_stream(
                self.entity_id, self._deltas(body, chat_log, done, said)):
            pass
        if not done:
            raise HubError("the hub's event stream ended before its result")
        if not "".join(said).strip() and done.get("reply"):  # a result without chunks (a spoken failure)
            chat_log.async_add_assistant_content_without_tools(
                conversation.AssistantContent(agent_id=self.entity_id, content=str(done["reply"])))
        return done

    async def _deltas(self, body: dict[str, Any], chat_log: conversation.ChatLog, done: dict[str, Any],
                      said: list[str]) -> AsyncIterator[conversation.AssistantContentDeltaDict]:
        """The chat-log deltas of the hub's events; its calls go into the log before its reply,
        its result into `done`."""
        yield {"role": "assistant"}
        async for name, data in self.entry.runtime_data.client.ask_streaming(body):
            if name == "chunk" and data.get("text"):
                said.append(str(data["text"]))
                yield {"content": str(data["text"])}
            elif name == "tool_finished":
                record_tool_call(chat_log, self.entity_id, data)
            elif name == "done":
                done.update(data)

    async def _not_answered(self, err: HubError, user_input: conversation.ConversationInput,
                            chat_log: conversation.ChatLog) -> conversation.ConversationResult:
        """The hub did not answer: a sentence in the request's language says so."""
        LOGGER.warning("Bolt Hub at %s did not answer: %s", self.entry.runtime_data.client.url, err)
        if isinstance(err, HubAuthFailed):
            self.entry.async_start_reauth(self.hass)
        response = intent.IntentResponse(language=user_input.language)
        response.async_set_error(intent.IntentResponseErrorCode.UNKNOWN,
                                 await spoken_error(self.hass, user_input.language, err.key))
        return conversation.ConversationResult(response=response, conversation_id=chat_log.conversation_id)
