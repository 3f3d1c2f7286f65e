"""The hub as a Wyoming `handle` program: Home Assistant's conversation agent over TCP.

HA's Wyoming integration opens one connection per turn and sends `transcript {text, language?,
context: {conversation_id, device_id?, satellite_id?}}`. It reads until `handled` / `not-handled`
(newer HA also stops at `error`) and speaks that text; it ignores `handled-start/-chunk/-stop`, so
every turn ends with a full `handled` or `not-handled` even when chunks were streamed. HA sends
no history: the agent keeps it per `conversation_id`. Clients other than HA may add per-turn
overrides to the context: `conversational` (bool), `reasoning` ("on" | "off" | "budget") and
`reasoning_budget` (thinking tokens, 0–8192; alone it means "budget"); bad values are ignored
(debug log) and the turn runs with the settings. `persona` names the persona to talk to (an
unknown one is answered with `not-handled` and a spoken "I don't know that character"). HA up to 2025.4 ships a wyoming library that
drops the transcript's context and language, so a transcript may come with neither: each turn
names its client (peer host and satellite) and the agent continues that client's conversation
only while it waits for an answer (a yes or no), so unrelated requests share no history.

Every transcript gets: `handled-start`, one `handled-chunk` per reply chunk, then `handled` (or
`not-handled` with a short spoken message), then `handled-stop`. A transcript that cannot be used
(no text, too long, a turn already running on the connection) gets only `not-handled`. Events
that cannot be decoded, and events of a type the hub does not serve, get an `error` event; the
connection stays usable.

Who may connect: the port has no authentication, so it takes only clients on the allow-list
(`wyoming_allowed_clients`; by default loopback plus, in the add-on, Home Assistant's internal
network, and standalone the private networks where Home Assistant runs), at most
`wyoming_max_connections` at once and a few from one address (those over a cap get an `error`
event), and closes slow and idle connections (`limits`). A connection whose first line is not a
JSON event header is dropped unanswered: that is how a web page's cross-site POST (`POST /
HTTP/1.1`, headers, then a JSON body) would reach the port, and its body must never run.

Turns run as tasks so the connection keeps answering `describe` (HA re-describes every 30 s) and
`ping` while a turn runs. A client that disconnects mid-turn does not cancel the turn (a command
that was understood still happens); its output is dropped and the turn stays bounded by the
turn timeout.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any, Sequence

from wyoming.event import Event, async_write_event
from wyoming.handle import Handled, HandledChunk, HandledStart, HandledStop, NotHandled
from wyoming.info import Attribution, Describe, HandleModel, HandleProgram, Info
from wyoming.error import Error
from wyoming.ping import Ping, Pong
from wyoming.server import AsyncEventHandler, AsyncServer

from hub import __version__
from hub.agent.api import AgentApi
from hub.agent.types import ReplyChunk, TurnDone, TurnRequest, TurnResult, request_problem
from hub.interfaces.client_networks import allowed_networks, is_allowed
from hub.interfaces.wyoming.events import ProtocolProblem
from hub.interfaces.wyoming.limits import EVENT_DEADLINE_S, BurstLog, ConnectionSlots, EventClock, refuse
from hub.llm.types import Reasoning, ReasoningMode
from hub.interfaces.announce import DiscoveryOptions, announced_host
from hub.interfaces.wyoming.discovery import Discovery
from hub.locales import normalize_language, phrase
from hub.settings import RuntimeSettings

_LOGGER = logging.getLogger(__name__)

PROGRAM_NAME = "bolt-hub"
ATTRIBUTION = Attribution(name="Bolt Hub", url="https://github.com/bolt-hub/bolt-hub")
DESCRIPTION = "Local voice assistant for smart homes (Nemotron Bolt, llama.cpp)"
REPLY_DRAIN_S = 1.0  # at stop, for the last events of turns that are ending
MAX_REASONING_BUDGET = 8192


@dataclass(frozen=True)
class WyomingOptions:
    wyoming_port: int
    wyoming_allowed_clients: str | None
    wyoming_idle_timeout: int
    wyoming_max_connections: int
    reasoning_budget: int  # without runtime settings
    language: str
    in_addon: bool  # trusts the Supervisor's network
    discovery: DiscoveryOptions


class WyomingServer:
    """Serves the agent over Wyoming and announces itself (zeroconf / Supervisor discovery)."""

    def __init__(
        self,
        agent: AgentApi,
        options: WyomingOptions,
        languages: Sequence[str] | None = None,
        *,
        host: str = "0.0.0.0",
        port: int | None = None,
        discovery: Discovery | bool = True,
        settings: RuntimeSettings | None = None,
    ) -> None:
        self.agent = agent
        self.options = options
        self.settings = settings  # the current reasoning budget for `context.reasoning: budget`
        self.host = host
        self._requested_port = options.wyoming_port if port is None else port
        self.languages = list(agent.languages if languages is None else languages)
        self._server: AsyncServer | None = None
        self.discovery: Discovery | None = (
            Discovery(options.discovery) if discovery is True else discovery if isinstance(discovery, Discovery) else None
        )
        self.turns: set[asyncio.Task[None]] = set()  # running turns, on any connection
        self.allowed_clients = allowed_networks(options.wyoming_allowed_clients, options.in_addon)
        self.idle_timeout = float(options.wyoming_idle_timeout)
        self.event_deadline = EVENT_DEADLINE_S
        self.slots = ConnectionSlots(options.wyoming_max_connections)
        self.burst_log = BurstLog()  # refusals and slow clients

    @property
    def port(self) -> int:
        """The bound port (differs from the requested one when that was 0)."""
        server = getattr(self._server, "_server", None)
        if server is not None and server.sockets:
            port: int = server.sockets[0].getsockname()[1]
            return port
        return self._requested_port

    @property
    def reasoning_budget(self) -> int:
        return self.settings.reasoning.budget if self.settings is not None else self.options.reasoning_budget

    @property
    def uri(self) -> str:
        return f"tcp://{self.host}:{self.port}"

    def info(self) -> Info:
        model = HandleModel(
            name=PROGRAM_NAME,
            attribution=ATTRIBUTION,
            installed=True,
            description=DESCRIPTION,
            version=__version__,
            languages=list(self.languages),
        )
        program = HandleProgram(
            name=PROGRAM_NAME,
            attribution=ATTRIBUTION,
            installed=True,
            description=DESCRIPTION,
            version=__version__,
            models=[model],
            supports_handled_streaming=True,
            supports_home_control=True,
        )
        return Info(handle=[program])

    async def start(self) -> None:
        self._server = AsyncServer.from_uri(f"tcp://{self.host}:{self._requested_port}")
        await self._server.start(lambda reader, writer: WyomingTurnHandler(reader, writer, self))
        _LOGGER.info("Wyoming server listening on %s", self.uri)
        if self.discovery is not None:
            await self.discovery.start(self.port, announced_host(self.host))

    async def stop(self) -> None:
        if self.discovery is not None:
            await self.discovery.stop()
        if self.turns:  # turns the shutdown just ended still send their reply
            await asyncio.wait(self.turns, timeout=REPLY_DRAIN_S)
        if self._server is not None:
            await self._server.stop()
            self._server = None
        for task in list(self.turns):
            task.cancel()
        if self.turns:
            await asyncio.wait(self.turns, timeout=5)


class WyomingTurnHandler(AsyncEventHandler):
    """One client connection: reads events, answers describe/ping at once, runs turns as tasks."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, server: WyomingServer) -> None:
        super().__init__(reader, writer)
        self.server = server
        self._write_lock = asyncio.Lock()
        self._connected = True
        self._turn: asyncio.Task[None] | None = None
        self._clock = EventClock(self._peer_host(), server.idle_timeout, server.event_deadline, server.burst_log)

    async def run(self) -> None:
        """Like the base class, but a bad event gets an `error` event instead of a hang-up, and
        only admitted clients are served, until they go slow or idle (see the module docstring)."""
        peer = self._peer_host()
        if not is_allowed(peer, self.server.allowed_clients):
            self.server.burst_log.warning("not allowed", f"Wyoming connection from {peer} refused: "
                                                        "not in wyoming_allowed_clients")
            self.writer.close()
            return
        refusal = self.server.slots.take(peer)
        if refusal is not None:
            self.server.burst_log.warning("full", f"Wyoming connection from {peer} refused: {refusal}")
            await refuse(self.reader, self.writer, refusal)
            return
        first = True
        try:
            while self._connected:
                item = await self._clock.next_event(self.reader, self._turn)
                if item is None:
                    break
                if isinstance(item, ProtocolProblem):
                    if first and item.not_an_event:
                        _LOGGER.warning("Wyoming connection from %s dropped: its first line is not a Wyoming "
                                        "event (%s); a web page's request looks like this", self._peer_host(),
                                        item.text)
                        break
                    _LOGGER.warning("Wyoming client sent a bad event: %s", item.text)
                    await self.send(Error(text=item.text, code=item.code).event())
                elif not await self.handle_event(item):
                    break
                first = False
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self.server.slots.give_back(peer)
            await self.disconnect()
            self.writer.close()

    async def disconnect(self) -> None:
        self._connected = False

    async def handle_event(self, event: Event) -> bool:
        if Describe.is_type(event.type):
            await self.send(self.server.info().event())
        elif event.type == "transcript":
            await self._on_transcript(event.data)
        elif Ping.is_type(event.type):
            await self.send(Pong(text=Ping.from_event(event).text).event())
        else:
            _LOGGER.info("Wyoming client sent an event the hub does not serve: %r", event.type[:64])
            await self.send(Error(text=f"unknown event type {event.type[:64]!r}: this is a conversation "
                                       "agent (describe, transcript, ping)", code="unknown_event").event())
        return True

    async def send(self, event: Event) -> None:
        """Write an event unless the client is gone (a vanished client is not an error)."""
        if not self._connected:
            return
        try:
            async with self._write_lock:
                await async_write_event(event, self.writer)
        except (ConnectionError, RuntimeError) as err:  # RuntimeError: transport closed
            _LOGGER.debug("Wyoming client went away while writing: %s", err)
            self._connected = False

    async def _on_transcript(self, data: dict[str, Any]) -> None:
        context = data.get("context")
        if not isinstance(context, dict):
            context = {}
        language = normalize_language(data.get("language"), default=self.server.options.language)
        conversation_id = _text_or_none(context.get("conversation_id"))
        satellite = _text_or_none(context.get("satellite_id")) or _text_or_none(context.get("device_id")) or ""
        text = data.get("text")
        text = text if isinstance(text, str) else ""  # request_problem: "empty"
        problem = request_problem(text)
        if problem is None and self._turn is not None and not self._turn.done():
            problem = "busy"
        if problem is not None:
            _LOGGER.info("Wyoming transcript refused: %s", problem)
            await self.send(_not_handled(phrase(language, f"error.{problem}"), conversation_id, problem))
            return
        conversational, reasoning = turn_overrides(context, self.server.reasoning_budget)
        request = TurnRequest(
            text=text,
            conversation_id=conversation_id,
            language=_text_or_none(data.get("language")),
            source="wyoming",
            satellite_id=_text_or_none(context.get("satellite_id")),
            device_id=_text_or_none(context.get("device_id")),
            area=_text_or_none(context.get("area")),
            conversational=conversational,
            reasoning=reasoning,
            persona=_text_or_none(context.get("persona")),
            # HA opens a connection per turn from a new port: the peer is its host (and satellite)
            client=f"wyoming:{self._peer_host()}/{satellite}",
        )
        task = asyncio.create_task(self._run_turn(request, language), name="wyoming turn")
        self._turn = task
        self.server.turns.add(task)
        task.add_done_callback(self.server.turns.discard)

    def _peer_host(self) -> str:
        peer = self.writer.get_extra_info("peername")
        return str(peer[0]) if isinstance(peer, tuple) and peer else "local"

    async def _run_turn(self, request: TurnRequest, language: str) -> None:
        """One turn: the agent bounds it by turn_timeout and ends it with TurnDone (a spoken
        timeout included), so the server adds no timer of its own."""
        await self.send(HandledStart(context=_context(request.conversation_id)).event())
        result: TurnResult | None = None
        turn = self.server.agent.run(request)
        try:
            async for event in turn:
                if isinstance(event, ReplyChunk) and event.text:
                    await self.send(HandledChunk(text=event.text).event())
                elif isinstance(event, TurnDone):
                    result = event.result
        except Exception:  # the agent promises not to raise; never let one turn kill the server
            _LOGGER.exception("Wyoming turn failed")
            result = _failure(request, language, "generic")
        finally:
            await turn.aclose()
            self._clock.turn_ended()
        assert result is not None, "Agent.run ends every turn with TurnDone"
        _log_turn(result)
        if result.ok:
            await self.send(Handled(text=result.reply, context=_context(result.conversation_id)).event())
        else:
            await self.send(_not_handled(result.reply, result.conversation_id, result.error))
        await self.send(HandledStop().event())


def turn_overrides(context: dict[str, Any], default_budget: int) -> tuple[bool | None, Reasoning | None]:
    """The transcript context's per-turn `conversational` and reasoning overrides (None: not given
    or unusable). `reasoning: budget` without a usable `reasoning_budget` takes `default_budget`."""
    conversational = context.get("conversational")
    if conversational is not None and not isinstance(conversational, bool):
        _LOGGER.debug("ignoring context.conversational %r: not true or false", conversational)
        conversational = None
    mode = context.get("reasoning")
    modes = {m.value: m for m in ReasoningMode}
    if mode is not None and (not isinstance(mode, str) or mode.strip().lower() not in modes):
        _LOGGER.debug("ignoring context.reasoning %r: not one of %s", mode, ", ".join(modes))
        mode = None
    budget = context.get("reasoning_budget")
    if budget is not None and (
        isinstance(budget, bool) or not isinstance(budget, int) or not 0 <= budget <= MAX_REASONING_BUDGET
    ):
        _LOGGER.debug("ignoring context.reasoning_budget %r: not a whole number from 0 to %d",
                      budget, MAX_REASONING_BUDGET)
        budget = None
    if mode is None and budget is None:
        return conversational, None
    reasoning_mode = modes[mode.strip().lower()] if mode is not None else ReasoningMode.BUDGET
    return conversational, Reasoning(reasoning_mode, default_budget if budget is None else budget)


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _context(conversation_id: str | None) -> dict[str, Any] | None:
    return {"conversation_id": conversation_id} if conversation_id else None


def _not_handled(text: str, conversation_id: str | None, code: str | None) -> Event:
    context: dict[str, Any] = _context(conversation_id) or {}
    if code:
        context["error"] = code
    return NotHandled(text=text, context=context or None).event()


def _log_turn(result: TurnResult) -> None:
    t = result.timings
    tools = ", ".join(
        f"{f.call.name}({f.call.arguments.get('entity_id', '')})={'ok' if f.ok else 'failed'}" for f in result.tool_calls
    )
    _LOGGER.info(
        "wyoming turn %s: %s via %s, %.3f s (first reply %.3f s, prefill %.3f s, decode %.3f s, tools %.3f s, "
        "%d model rounds, %d/%d prompt tokens evaluated); tool calls: [%s]",
        result.conversation_id or "-", "ok" if result.ok else f"failed ({result.error})", result.path,
        t.total_s, t.first_token_s, t.model.prefill_s, t.model.decode_s, t.tools_s, t.model_rounds,
        t.model.evaluated_prompt_tokens, t.model.prompt_tokens, tools,
    )


def _failure(request: TurnRequest, language: str, code: str) -> TurnResult:
    return TurnResult(
        conversation_id=request.conversation_id or "",
        language=language,
        reply=phrase(language, f"error.{code}"),
        ok=False,
        error=code,
    )
