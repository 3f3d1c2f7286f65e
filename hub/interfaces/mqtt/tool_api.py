"""Direct tool calls over MQTT: `<base>/tool/<name>` → `<base>/tool/<name>/result`.

Call (JSON object, at most 64 kB): {"id"?, "arguments"?: {...}, "persona"?, "conversation_id"?,
"language"?}; without an "arguments" key the object minus those fields is the arguments, so
`{"entity_id": "light.desk"}` works too. Result (QoS 1):
  {"id", "tool", "ok", "result": <what the model would see>, "speech", "pending",
   "changed_entities", "error"?, "message"?}
Bad JSON, a non-object, an unknown persona, an unknown tool, a tool the persona may not use and
arguments that fail the tool's schema all get ok=false with the error's name and a message
(the id when readable), and nothing runs. Calls run concurrently (at most `max_pending`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable

from hub.agent.api import AgentApi
from hub.interfaces.direct_tools import CallError, DirectCall, error_json, parse_call, result_json, run_call
from hub.transport.mqtt_client import MqttClient
from hub.transport.mqtt_subscriptions import MqttMessage
from hub.transport.mqtt_topics import HubTopics

_LOGGER = logging.getLogger(__name__)


class MqttToolApi:
    """start/stop component serving direct tool calls over MQTT."""

    def __init__(self, client: MqttClient, agent: AgentApi, topics: HubTopics, *, default_language: str = "en",
                 max_pending: int = 64) -> None:
        self.client = client
        self.agent = agent
        self.topics = topics
        self.default_language = default_language
        self.max_pending = max_pending
        self._tasks: set[asyncio.Task[None]] = set()
        self._unsubscribe: Callable[[], None] | None = None

    async def start(self) -> None:
        self._unsubscribe = await self.client.subscribe(self.topics.tool_calls, self._on_call, retained=False)

    async def stop(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _on_call(self, message: MqttMessage) -> None:
        tool = message.topic.rsplit("/", 1)[-1]
        try:
            call = parse_call(tool, message.payload)
        except CallError as err:
            _LOGGER.warning("bad tool call on %s: %s", message.topic, err)
            self._publish(tool, error_json(tool, err.call_id, err.code, str(err)))
            return
        if len(self._tasks) >= self.max_pending:
            self._publish(tool, error_json(tool, call.id, "busy",
                                           f"more than {self.max_pending} tool calls are running; try again later"))
            return
        task = asyncio.ensure_future(self._run(call))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run(self, call: DirectCall) -> None:
        try:
            result = await run_call(self.agent, call, "mqtt", self.default_language)
        except CallError as err:
            self._publish(call.tool, error_json(call.tool, call.id, err.code, str(err)))
            return
        except asyncio.CancelledError:
            self._publish(call.tool, error_json(call.tool, call.id, "cancelled", "the hub is stopping"))
            raise
        except Exception as err:
            _LOGGER.exception("direct call of %s failed", call.tool)
            self._publish(call.tool, error_json(call.tool, call.id, "internal", str(err)))
            return
        self._publish(call.tool, result_json(call.tool, call.id, result))

    def _publish(self, tool: str, answer: dict[str, Any]) -> None:
        self.client.publish(self.topics.tool_result(tool), answer, qos=1)
