"""The hub's MQTT API: ask on `<base>/ask`, replies on `<base>/reply`, events on `<base>/event`.

Ask (JSON object, at most 64 kB; on `<base>/ask/<persona>` the persona is the topic's unless
the ask names one):
  {"text": str (required), "conversation_id": str?, "language": str?, "id": str|int?,
   "persona": str? (default: the conversation's, else the default persona),
   "conversational": bool?, "reasoning": "on"|"off"|"budget" | {"mode": …, "budget": int}?,
   "device_id": str?, "satellite_id": str?, "area": str? (where it was said: the speaker's room,
   for "turn on the lights"; an area id or name wins over the ids),
   "client": str? (the asker's own name: its conversation continues across asks),
   "client_key_sha256": str? (64 hex digits: the SHA-256 of a secret the asker keeps),
   "client_key": str? (that secret)}
Every subscriber of `<base>/ask` reads every ask, so nothing an ask says is a proof of who sent
it. A sensitive action held for a yes is confirmed only by an answer carrying the `client_key`
whose SHA-256 the asking message announced; a yes that copies the announcement, or carries only
a `client` name, confirms nothing.
Reply on `<base>/reply` (QoS 1, kept in the outbox while the broker is away):
  {"type": "reply", "event_type": "replied"|"failed", "id", "ok", "text", "conversation_id",
   "language", "error", "path", "source", "tool_calls": [{"name", "arguments", "ok", "data",
   "seconds"}], "timings": {...}, "latency_ms"}
A bad ask gets {"type": "error", "event_type": "failed", "id" (when readable), "ok": false,
"error": "bad_request"|"busy"|"internal", "text": <what is wrong>} on the same topic.
Replies of turns other interfaces started are published too (`id` null, `source` says who
asked), and reports ("acknowledge, then report") as {"type": "report", "event_type": "reported"}.
`<base>/greet` {"persona", "conversation_id"?, "id"?} opens a conversation with a persona: its
greeting comes as {"type": "greeting", "event_type": "greeted", "text", "conversation_id", …}.

Events on `<base>/event`: {"type": "turn_started"|"tool_started"|"tool_finished"|"reply"|
"report"|"cleared", "turn", "id", "conversation_id", "source", …}; each finished tool call is also
published on `<base>/tool_called` (the feed of the "tool called" device trigger and event entity).

Asks run concurrently, but asks of one conversation run one after the other, in arrival order.
Retained asks and greets are ignored (the broker would replay them at every hub start).
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import logging
import re
import uuid
from dataclasses import dataclass, replace
from typing import Any, Callable

from hub.agent.personas import UnknownPersona
from hub.agent.types import MAX_REQUEST_CHARS, ToolFinished, ToolStarted, TurnDone, TurnRequest, TurnResult
from hub.interfaces import json_input
from hub.agent.activity import Activity, ConversationsCleared, Reported, Turn, TurnStarted
from hub.agent.api import AgentApi
from hub.core.tools import ANNOUNCED, PROVEN
from hub.interfaces.request_ids import MAX_ID_CHARS, checked_id, peek_id
from hub.transport.mqtt_client import MqttClient
from hub.transport.mqtt_subscriptions import MqttMessage
from hub.transport.mqtt_topics import HubTopics
from hub.llm.types import Reasoning, ReasoningMode
from hub.locales import normalize_language, phrase

_LOGGER = logging.getLogger(__name__)

MAX_ASK_BYTES = 64 * 1024


class AskError(ValueError):
    def __init__(self, message: str, ask_id: str | int | None = None, code: str = "bad_request") -> None:
        super().__init__(message)
        self.ask_id = ask_id
        self.code = code


@dataclass(frozen=True)
class Ask:
    text: str
    conversation_id: str | None = None
    language: str | None = None
    id: str | int | None = None
    conversational: bool | None = None
    reasoning: Reasoning | None = None
    persona: str | None = None
    client: str | None = None  # who asks, as the agent compares it (see `_identity`)
    satellite_id: str | None = None  # where it was said (the speaker's room: hub.home.places)
    device_id: str | None = None
    area: str | None = None


def _identity(data: dict[str, Any], fail: Callable[[str], AskError]) -> str | None:
    """The asker as TurnRequest.client: proven by a secret (`client_key`), announced by its
    SHA-256 (`client_key_sha256`, never enough to confirm), or only named (`client`)."""
    key = _optional_str(data, "client_key", 200, fail)
    if key is not None:
        return f"mqtt{PROVEN}{hashlib.sha256(key.encode()).hexdigest()}"
    announced = _optional_str(data, "client_key_sha256", 64, fail)
    if announced is not None:
        if not re.fullmatch(r"[0-9a-fA-F]{64}", announced):
            raise fail("'client_key_sha256' must be 64 hexadecimal digits")
        return f"mqtt{ANNOUNCED}{announced.lower()}"
    name = _optional_str(data, "client", 200, fail)
    return f"mqtt{ANNOUNCED}name:{name}" if name is not None else None


def parse_ask(payload: bytes) -> Ask:
    """Validate one ask payload; AskError says what is wrong (with the id when readable)."""
    if len(payload) > MAX_ASK_BYTES:
        raise AskError(f"ask payload of {len(payload)} bytes exceeds {MAX_ASK_BYTES}", peek_id(payload))
    try:
        data = json_input.loads(payload)
    except json_input.BadJson as err:
        raise AskError(f"ask payload is not JSON text ({err}): send an object with a 'text' field",
                       peek_id(payload)) from None
    if not isinstance(data, dict):
        raise AskError("ask payload must be a JSON object with a 'text' field")
    try:
        ask_id = checked_id(data)
    except ValueError as err:
        raise AskError(str(err)) from None

    def fail(message: str) -> AskError:
        return AskError(message, ask_id)

    text = data.get("text")
    if not isinstance(text, str):
        raise fail("'text' is required and must be a string")
    text = text.strip()
    if not text:
        raise fail("'text' is empty")
    if len(text) > MAX_REQUEST_CHARS:
        raise fail(f"'text' longer than {MAX_REQUEST_CHARS} characters")
    conversation_id = _optional_str(data, "conversation_id", 200, fail)
    language = _optional_str(data, "language", 35, fail)
    persona = _optional_str(data, "persona", 64, fail)
    client = _identity(data, fail)
    satellite_id, device_id, area = (_optional_str(data, key, 255, fail)
                                     for key in ("satellite_id", "device_id", "area"))
    conversational = data.get("conversational")
    if conversational is not None and not isinstance(conversational, bool):
        raise fail("'conversational' must be true or false")
    return Ask(text, conversation_id, language, ask_id, conversational, _parse_reasoning(data.get("reasoning"), fail),
               persona, client, satellite_id, device_id, area)


def _optional_str(data: dict[str, Any], key: str, limit: int, fail: Callable[[str], AskError]) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise fail(f"'{key}' must be a non-empty string")
    if len(value) > limit:
        raise fail(f"'{key}' longer than {limit} characters")
    return value.strip()


def _parse_reasoning(value: Any, fail: Callable[[str], AskError]) -> Reasoning | None:
    if value is None:
        return None
    modes = [m.value for m in ReasoningMode]
    if isinstance(value, str):
        if value not in modes:
            raise fail(f"'reasoning' must be one of {', '.join(modes)}")
        return Reasoning(ReasoningMode(value))
    if isinstance(value, dict):
        mode, budget = value.get("mode", "budget"), value.get("budget", Reasoning().budget)
        if mode not in modes:
            raise fail(f"'reasoning.mode' must be one of {', '.join(modes)}")
        if isinstance(budget, bool) or not isinstance(budget, int) or not 0 <= budget <= 8192:
            raise fail("'reasoning.budget' must be an integer from 0 to 8192")
        return Reasoning(ReasoningMode(mode), budget)
    raise fail("'reasoning' must be a mode string or an object {mode, budget}")




def tool_call_json(finished: ToolFinished) -> dict[str, Any]:
    return {
        "name": finished.call.name,
        "arguments": finished.call.arguments,
        "call_id": finished.call.id,
        "ok": finished.ok,
        "data": finished.data,
        "seconds": round(finished.seconds, 3),
    }


def reply_json(result: TurnResult, ask_id: str | int | None, source: str) -> dict[str, Any]:
    return {
        "type": "reply",
        "event_type": "replied" if result.ok else "failed",
        "id": ask_id,
        "ok": result.ok,
        "text": result.reply,
        "conversation_id": result.conversation_id,
        "language": result.language,
        "error": result.error,
        "path": result.path,
        "awaiting": result.awaiting,
        "source": source,
        "tool_calls": [tool_call_json(t) for t in result.tool_calls],
        "timings": result.timings.as_json(),
        "latency_ms": round(result.timings.total_s * 1000),
    }


class MqttApi:
    """start/stop component serving asks over MQTT."""

    def __init__(self, client: MqttClient, agent: AgentApi, topics: HubTopics, max_pending: int = 64,
                 language: str = "en") -> None:
        self.client = client
        self.language = language
        self.agent = agent
        self.topics = topics
        self.max_pending = max_pending
        self._tasks: set[asyncio.Task[None]] = set()
        self._last_in_conversation: dict[str, asyncio.Task[None]] = {}
        self._ask_ids: dict[int, str | int | None] = {}  # id(TurnRequest) → ask id, while it runs
        self._unsubscribes: list[Callable[[], None]] = []

    async def start(self) -> None:
        self._unsubscribes.append(self.agent.add_observer(self._observe))
        self._unsubscribes.append(await self.client.subscribe(self.topics.ask, self._on_ask, retained=False))
        self._unsubscribes.append(await self.client.subscribe(f"{self.topics.ask}/+", self._on_ask, retained=False))
        self._unsubscribes.append(await self.client.subscribe(self.topics.greet, self._on_greet, retained=False))

    async def stop(self) -> None:
        """No new asks; cancelled ones still get their failed reply (from _observe); then stop observing."""
        stop_observing, *stop_asking = self._unsubscribes or [lambda: None]
        for unsubscribe in stop_asking:
            unsubscribe()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        stop_observing()
        self._unsubscribes.clear()

    async def _on_ask(self, message: MqttMessage) -> None:
        try:
            ask = parse_ask(message.payload)
        except AskError as err:
            _LOGGER.warning("bad MQTT ask on %s: %s", message.topic, err)
            self._publish_error(err.ask_id, err.code, str(err))
            return
        topic_persona = message.topic[len(self.topics.ask) + 1:]  # `<base>/ask/<persona>`
        if topic_persona and ask.persona is None:
            ask = replace(ask, persona=topic_persona)
        self.submit(ask)

    async def _on_greet(self, message: MqttMessage) -> None:
        """Open a conversation with a persona; its greeting is published as a reply."""
        try:
            data = json_input.loads(message.payload)
            if not isinstance(data, dict):
                raise ValueError("greet payload must be a JSON object {persona, conversation_id?, id?}")
            greet_id = checked_id(data)
        except ValueError as err:  # BadJson too
            self._publish_error(peek_id(message.payload), "bad_request", f"bad greet payload: {err}")
            return
        persona, conversation_id = data.get("persona"), data.get("conversation_id")
        if not all(v is None or (isinstance(v, str) and 0 < len(v) <= MAX_ID_CHARS) for v in (persona, conversation_id)):
            self._publish_error(greet_id, "bad_request", "'persona' and 'conversation_id' must be short strings")
            return
        try:
            result = self.agent.greet(persona, conversation_id)
        except UnknownPersona as err:
            self._publish_error(greet_id, "unknown_persona", str(err))
            return
        greeting = {**reply_json(result, greet_id, "mqtt"), "type": "greeting", "event_type": "greeted"}
        self.client.publish(self.topics.reply, greeting, qos=1)

    def submit(self, ask: Ask) -> None:
        """Run an ask (also used by the hub's text entity); its reply goes to `<base>/reply`."""
        if len(self._tasks) >= self.max_pending:
            # the asker's own language, like the agent's busy reply: this text may well be spoken
            self._publish_error(ask.id, "busy", phrase(normalize_language(ask.language, default=self.language), "error.busy"))
            return
        previous = self._last_in_conversation.get(ask.conversation_id) if ask.conversation_id else None
        task = asyncio.ensure_future(self._run(ask, previous))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        if ask.conversation_id:
            self._last_in_conversation[ask.conversation_id] = task
            task.add_done_callback(functools.partial(self._forget, ask.conversation_id))

    def _forget(self, conversation_id: str, task: asyncio.Task[None]) -> None:
        if self._last_in_conversation.get(conversation_id) is task:
            del self._last_in_conversation[conversation_id]

    async def _run(self, ask: Ask, previous: asyncio.Task[None] | None) -> None:
        if previous is not None:
            await asyncio.wait({previous})  # order within a conversation, whatever its outcome
        request = TurnRequest(
            text=ask.text,
            conversation_id=ask.conversation_id,
            language=ask.language,
            source="mqtt",
            conversational=ask.conversational,
            reasoning=ask.reasoning,
            persona=ask.persona,
            satellite_id=ask.satellite_id,
            device_id=ask.device_id,
            area=ask.area,
            # subscribers do not see who published (see `_identity`); without any name every ask
            # is a stranger, and a "yes" on the bus never confirms anything
            client=ask.client or f"mqtt-anonymous:{uuid.uuid4().hex}",
        )
        self._ask_ids[id(request)] = ask.id
        try:
            # the reply is published by _observe at TurnDone (also the one the agent's activity makes up
            # when the agent raises or the turn is cancelled), so every ask gets exactly one
            await self.agent.ask(request)
        except Exception:
            _LOGGER.exception("the agent failed on an MQTT ask")
        finally:
            self._ask_ids.pop(id(request), None)

    # --- publishing ---------------------------------------------------------------------------

    def _publish_error(self, ask_id: str | int | None, code: str, message: str) -> None:
        self.client.publish(
            self.topics.reply,
            {"type": "error", "event_type": "failed", "id": ask_id, "ok": False, "error": code, "text": message},
            qos=1,
        )

    def _observe(self, turn: Turn | None, activity: Activity) -> None:
        """Events and replies of every turn (MQTT asks carry their id)."""
        if turn is None:
            if isinstance(activity, Reported):
                report = {"type": "report", "event_type": "reported", "id": None, "ok": True,
                          "text": activity.text, "conversation_id": activity.conversation_id}
                self.client.publish(self.topics.reply, report, qos=1)
                self.client.publish(self.topics.event, report, qos=1)
            elif isinstance(activity, ConversationsCleared):
                self.client.publish(self.topics.event, {"type": "cleared"}, qos=1)
            return
        request = turn.request
        base = {
            "turn": turn.turn_id,
            "id": self._ask_ids.get(id(request)),
            "conversation_id": request.conversation_id,
            "source": request.source,
        }
        if isinstance(activity, TurnStarted):
            self.client.publish(self.topics.event, {"type": "turn_started", **base, "text": request.text}, qos=1)
        elif isinstance(activity, ToolStarted):
            call = activity.call
            event = {"type": "tool_started", **base, "name": call.name, "arguments": call.arguments, "call_id": call.id}
            self.client.publish(self.topics.event, event, qos=1)
        elif isinstance(activity, ToolFinished):
            event = {"type": "tool_finished", **base, **tool_call_json(activity)}
            self.client.publish(self.topics.event, event, qos=1)
            self.client.publish(self.topics.tool_called, {**event, "event_type": "tool_called"}, qos=1)
        elif isinstance(activity, TurnDone):
            reply = reply_json(activity.result, base["id"], request.source)
            reply["turn"] = turn.turn_id
            self.client.publish(self.topics.reply, reply, qos=1)
            self.client.publish(self.topics.event, {**reply, "type": "reply"}, qos=1)
