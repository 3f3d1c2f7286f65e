"""The hub's own entities in Home Assistant, by MQTT device-based discovery (one device).

`homeassistant/device/<node_id>/config` announces: sensors (status idle/thinking/speaking,
last reply, last latency), a switch (conversational mode), a select (reasoning on/off/budget),
a number (reasoning budget), a text entity to ask, event entities (reply, tool call), a button
(clear conversations) and device triggers ("replied", "tool called"), all sharing the hub's
availability topic. Changing the switch/select/number calls `settings.set(...)`, which
persists; the agent reads the settings every turn, so the change applies to the next turn.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Awaitable, Callable

from hub import __version__
from hub.agent.types import ReplyChunk, TurnDone
from hub.agent.activity import Activity, Turn, TurnStarted
from hub.agent.api import AgentApi
from hub.interfaces.mqtt.api import Ask, MqttApi
from hub.settings import RuntimeSettings, SettingValue
from hub.transport.mqtt_client import MqttClient
from hub.transport.mqtt_subscriptions import MqttMessage
from hub.transport.mqtt_topics import HubTopics

_LOGGER = logging.getLogger(__name__)

MAX_TEXT_ENTITY_CHARS = 255
STATUSES = ["idle", "thinking", "speaking"]
REPLY_EVENT_TYPES = ["replied", "failed", "reported"]


def discovery_payload(topics: HubTopics, device_name: str) -> dict[str, Any]:  # data table
    """The device-based discovery config (abbreviated keys, as devices usually send them)."""
    node = topics.node_id

    def uid(key: str) -> str:
        return f"{node}_{key}"

    settings_state = {"stat_t": topics.settings}
    components: dict[str, dict[str, Any]] = {
        "status": {
            "p": "sensor", "name": "Status", "uniq_id": uid("status"), "stat_t": topics.state,
            "val_tpl": "{{ value_json.status }}", "dev_cla": "enum", "ops": STATUSES, "ic": "mdi:robot",
        },
        "last_reply": {
            "p": "sensor", "name": "Last reply", "uniq_id": uid("last_reply"), "stat_t": topics.state,
            "val_tpl": "{{ value_json.last_reply[:255] }}", "ic": "mdi:message-reply-text",
        },
        "last_latency": {
            "p": "sensor", "name": "Last latency", "uniq_id": uid("last_latency"), "stat_t": topics.state,
            "val_tpl": "{{ value_json.last_latency_ms }}", "dev_cla": "duration", "unit_of_meas": "ms",
            "stat_cla": "measurement", "ent_cat": "diagnostic",
        },
        "conversational_mode": {
            "p": "switch", "name": "Conversational mode", "uniq_id": uid("conversational_mode"),
            "cmd_t": topics.setting_command("conversational_mode"), **settings_state,
            "val_tpl": "{{ 'ON' if value_json.conversational_mode else 'OFF' }}",
            "pl_on": "ON", "pl_off": "OFF", "ent_cat": "config", "ic": "mdi:forum",
        },
        "reasoning": {
            "p": "select", "name": "Reasoning", "uniq_id": uid("reasoning"),
            "cmd_t": topics.setting_command("reasoning"), **settings_state,
            "val_tpl": "{{ value_json.reasoning }}", "ops": ["on", "off", "budget"], "ent_cat": "config",
            "ic": "mdi:head-lightbulb",
        },
        "reasoning_budget": {
            "p": "number", "name": "Reasoning budget", "uniq_id": uid("reasoning_budget"),
            "cmd_t": topics.setting_command("reasoning_budget"), **settings_state,
            "val_tpl": "{{ value_json.reasoning_budget }}", "min": 0, "max": 8192, "step": 1,
            "mode": "box", "unit_of_meas": "tokens", "ent_cat": "config",
        },
        "ask": {
            "p": "text", "name": "Ask", "uniq_id": uid("ask"), "cmd_t": topics.ask_text,
            "stat_t": topics.ask_text_state, "min": 0, "max": MAX_TEXT_ENTITY_CHARS, "ic": "mdi:chat-question",
        },
        "reply": {
            "p": "event", "name": "Reply", "uniq_id": uid("reply_event"), "stat_t": topics.reply,
            "evt_typ": REPLY_EVENT_TYPES, "ic": "mdi:message-reply",
        },
        "tool_call": {
            "p": "event", "name": "Tool call", "uniq_id": uid("tool_call_event"), "stat_t": topics.tool_called,
            "evt_typ": ["tool_called"], "ic": "mdi:tools",
        },
        "clear": {
            "p": "button", "name": "Clear conversations", "uniq_id": uid("clear"), "cmd_t": topics.clear,
            "pl_prs": "PRESS", "ic": "mdi:broom",
        },
        "replied_trigger": {
            "p": "device_automation", "atype": "trigger", "type": "replied", "subtype": "reply", "t": topics.reply,
        },
        "tool_called_trigger": {
            "p": "device_automation", "atype": "trigger", "type": "tool_called", "subtype": "tool",
            "t": topics.tool_called,
        },
    }
    return {
        "dev": {"ids": [node], "name": device_name, "mf": "Bolt Hub", "mdl": "Bolt Hub voice hub", "sw": __version__},
        "o": {"name": "bolt-hub", "sw": __version__},
        "avty_t": topics.availability,
        "cmps": components,
    }


class HubEntities:
    """start/stop component: publishes the discovery and states, obeys the entities' commands."""

    def __init__(
        self, client: MqttClient, topics: HubTopics, settings: RuntimeSettings, agent: AgentApi, api: MqttApi,
        device_name: str = "Bolt Hub",
    ) -> None:
        self.client = client
        self.topics = topics
        self.settings = settings
        self.agent = agent
        self.api = api
        self.device_name = device_name
        self.status = "idle"
        self.last_reply = ""
        self.last_latency_ms: int | None = None
        self._turns: dict[str, str] = {}  # turn id → "thinking" | "speaking"
        self._unsubscribes: list[Callable[[], None]] = []

    async def start(self) -> None:
        self.settings.add_listener(self._on_setting_changed)
        self._unsubscribes.append(self.agent.add_observer(self._observe))
        for name in ("conversational_mode", "reasoning", "reasoning_budget"):
            handler = self._setting_handler(name)
            self._unsubscribes.append(await self.client.subscribe(self.topics.setting_command(name), handler,
                                                                  retained=False))
        self._unsubscribes.append(await self.client.subscribe(self.topics.ask_text, self._on_ask_text, retained=False))
        self._unsubscribes.append(await self.client.subscribe(self.topics.clear, self._on_clear, retained=False))
        self.client.add_announcer(self.announce)

    async def stop(self) -> None:
        for unsubscribe in self._unsubscribes:
            unsubscribe()
        self._unsubscribes.clear()

    async def announce(self) -> None:
        """Discovery and current states (retained); on every connect and Home Assistant birth."""
        self.client.publish(self.topics.discovery, discovery_payload(self.topics, self.device_name), qos=1, retain=True)
        self.publish_settings()
        self.publish_state()

    def publish_settings(self) -> None:
        self.client.publish(self.topics.settings, self.settings.as_dict(), qos=1, retain=True)

    def publish_state(self) -> None:
        self.client.publish(
            self.topics.state,
            {"status": self.status, "last_reply": self.last_reply, "last_latency_ms": self.last_latency_ms},
            qos=1,
            retain=True,
        )

    # --- commands from Home Assistant ---------------------------------------------------------

    def _setting_handler(self, name: str) -> Callable[[MqttMessage], Awaitable[None]]:
        async def handle(message: MqttMessage) -> None:
            try:
                raw = message.payload.decode("utf-8").strip()
                self.settings.set(name, _setting_value(name, raw))  # listeners publish the new state
            except (UnicodeDecodeError, ValueError) as err:
                _LOGGER.warning("rejected setting %s over MQTT: %s", name, err)
                self.client.publish(
                    self.topics.event, {"type": "error", "error": "bad_setting", "setting": name, "text": str(err)}, qos=1
                )
                self.publish_settings()  # so Home Assistant shows the value still in force

        return handle

    def _on_setting_changed(self, name: str, value: SettingValue) -> None:
        self.publish_settings()

    async def _on_ask_text(self, message: MqttMessage) -> None:
        try:
            text = message.payload.decode("utf-8").strip()
        except UnicodeDecodeError:
            _LOGGER.warning("ignored a non-UTF-8 text ask")
            return
        if not text or len(text) > MAX_TEXT_ENTITY_CHARS * 4:
            _LOGGER.warning("ignored an empty or oversized text ask (%d characters)", len(text))
            return
        self.client.publish(self.topics.ask_text_state, text[:MAX_TEXT_ENTITY_CHARS], qos=1, retain=True)
        self.api.submit(Ask(text=text, conversation_id=f"{self.topics.node_id}_text_entity"))

    async def _on_clear(self, message: MqttMessage) -> None:
        self.agent.clear_conversations()

    # --- status ------------------------------------------------------------------------------

    def _observe(self, turn: Turn | None, activity: Activity) -> None:
        if turn is None:
            return
        if isinstance(activity, TurnStarted):
            self._turns[turn.turn_id] = "thinking"
        elif isinstance(activity, ReplyChunk):
            if self._turns.get(turn.turn_id) == "speaking":
                return  # no state message per chunk
            self._turns[turn.turn_id] = "speaking"
        elif isinstance(activity, TurnDone):
            self._turns.pop(turn.turn_id, None)
            result = activity.result
            self.last_reply = result.reply
            self.last_latency_ms = round((time.monotonic() - turn.started) * 1000)
        else:
            return
        statuses = set(self._turns.values())
        self.status = "speaking" if "speaking" in statuses else "thinking" if statuses else "idle"
        self.publish_state()


def _setting_value(name: str, raw: str) -> SettingValue:
    """MQTT payloads as Home Assistant sends them → values for settings.set (which validates)."""
    if name == "conversational_mode":
        upper = raw.upper()
        if upper in ("ON", "TRUE", "1"):
            return True
        if upper in ("OFF", "FALSE", "0"):
            return False
        raise ValueError(f"expected ON or OFF, got {raw[:40]!r}")
    if name == "reasoning_budget":
        number = float(raw)
        if not number.is_integer():
            raise ValueError(f"the reasoning budget must be a whole number, got {raw[:40]!r}")
        return int(number)
    return raw
