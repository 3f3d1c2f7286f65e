"""The Wyoming server against the wyoming library's own client, on loopback, with a scripted agent."""

from __future__ import annotations

import asyncio

import pytest
from wyoming.asr import Transcript
from wyoming.client import AsyncTcpClient
from wyoming.event import Event
from wyoming.handle import Handled, HandledChunk, HandledStart, NotHandled
from wyoming.info import Describe, Info
from wyoming.ping import Ping, Pong

import hub
from hub.config import validate
from hub.options import hub_options
from hub.agent.types import MAX_REQUEST_CHARS
from hub.interfaces.wyoming.server import WyomingServer
from hub.locales import phrase
from helpers.hanging_agent import make_agent
from helpers.scripted_engine import ScriptedEngine, call
from helpers.wyoming_fake_agent import ScriptedAgent

pytestmark = pytest.mark.timeout(30)


@pytest.fixture
def agent() -> ScriptedAgent:
    return ScriptedAgent()


@pytest.fixture
async def server(agent: ScriptedAgent):
    server = WyomingServer(agent, hub_options(validate({})).wyoming, host="127.0.0.1", port=0, discovery=False)
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def hanging():
    """The real agent (turn_timeout 1 s) whose model calls a tool that never returns."""
    agent, tool = make_agent(ScriptedEngine([[call("wait_for_garage")]]), turn_timeout=1)
    server = WyomingServer(agent, hub_options(validate({})).wyoming, host="127.0.0.1", port=0, discovery=False)
    await server.start()
    yield server, tool
    await server.stop()


def client_for(server: WyomingServer) -> AsyncTcpClient:
    return AsyncTcpClient("127.0.0.1", server.port)


async def read(client: AsyncTcpClient) -> Event:
    event = await asyncio.wait_for(client.read_event(), 10)
    assert event is not None, "server closed the connection"
    return event


async def read_turn(client: AsyncTcpClient) -> list[Event]:
    """Events up to and including handled-stop."""
    events = []
    while not events or events[-1].type != "handled-stop":
        events.append(await read(client))
    return events


async def raw_connection(server: WyomingServer):
    return await asyncio.open_connection("127.0.0.1", server.port)


async def test_describe_reports_a_handle_program(server: WyomingServer) -> None:
    async with client_for(server) as client:
        await client.write_event(Describe().event())
        event = await read(client)
    assert Info.is_type(event.type)
    info = Info.from_event(event)
    [program] = info.handle
    assert program.name == "bolt-hub"
    assert program.installed and program.supports_handled_streaming
    assert program.version == hub.__version__ and program.description
    assert program.attribution.name
    assert program.models[0].languages == ["en", "de"] and program.models[0].installed
    assert not info.asr and not info.tts and not info.intent


async def test_transcript_streams_chunks_then_full_handled(server: WyomingServer, agent: ScriptedAgent) -> None:
    context = {"conversation_id": "conv-1", "device_id": "dev-9", "satellite_id": "assist_satellite.kitchen"}
    async with client_for(server) as client:
        await client.write_event(Transcript("turn on the light", context=context, language="de-DE").event())
        events = await read_turn(client)
    assert [e.type for e in events] == ["handled-start", "handled-chunk", "handled-chunk", "handled", "handled-stop"]
    chunks = [HandledChunk.from_event(e).text for e in events if e.type == "handled-chunk"]
    assert "".join(chunks) == "You said: turn on the light"
    handled = Handled.from_event(events[3])
    assert handled.text == "You said: turn on the light"
    assert handled.context == {"conversation_id": "conv-1"}
    assert HandledStart.from_event(events[0]).context == {"conversation_id": "conv-1"}
    [request] = agent.requests
    assert request.source == "wyoming"
    assert (request.text, request.conversation_id, request.language) == ("turn on the light", "conv-1", "de-DE")
    assert (request.device_id, request.satellite_id) == ("dev-9", "assist_satellite.kitchen")


async def test_transcript_as_home_assistant_2025_4_sends_it(server: WyomingServer, agent: ScriptedAgent) -> None:
    """HA 2025.4's wyoming library sends only the text (no context, no language) and reads only
    `handled`; each turn names the same client (the peer, whatever its port) and no conversation:
    the agent decides whether it continues one (only while it waits for an answer)."""
    replies = []
    for text in ("turn on the light", "a bit dimmer"):
        async with client_for(server) as client:  # HA opens one connection per turn
            await client.write_event(Event(type="transcript", data={"text": text}))
            while True:
                event = await read(client)
                if Handled.is_type(event.type) or NotHandled.is_type(event.type):
                    break
        replies.append(Handled.from_event(event).text)
    assert replies == ["You said: turn on the light", "You said: a bit dimmer"]
    first, second = agent.requests
    assert first.language is None
    assert first.conversation_id is None and second.conversation_id is None
    assert first.client == second.client == "wyoming:127.0.0.1/"


async def test_describe_is_answered_while_a_turn_runs(server: WyomingServer, agent: ScriptedAgent) -> None:
    async with client_for(server) as client:
        await client.write_event(Transcript("wait", context={"conversation_id": "c"}).event())
        assert (await read(client)).type == "handled-start"
        assert (await read(client)).type == "handled-chunk"
        await client.write_event(Describe().event())
        await client.write_event(Ping(text="p1").event())
        info = await read(client)
        pong = await read(client)
        assert Info.is_type(info.type) and Pong.from_event(pong).text == "p1"
        assert agent.finished == [], "the turn was still blocked when describe was answered"
        agent.gate.set()
        rest = await read_turn(client)
    assert [e.type for e in rest] == ["handled-chunk", "handled", "handled-stop"]
    assert agent.finished == ["wait"]


async def test_client_disconnecting_mid_turn(server: WyomingServer, agent: ScriptedAgent) -> None:
    client = client_for(server)
    await client.connect()
    await client.write_event(Transcript("wait", context={"conversation_id": "c"}).event())
    assert (await read(client)).type == "handled-start"
    await client.disconnect()
    await asyncio.sleep(0.05)
    assert len(server.turns) == 1, "the understood command keeps running"
    agent.gate.set()
    for _ in range(100):
        if not server.turns:
            break
        await asyncio.sleep(0.02)
    assert not server.turns and agent.finished == ["wait"]
    async with client_for(server) as client:  # the server still serves
        await client.write_event(Transcript("again").event())
        assert Handled.from_event([e for e in await read_turn(client) if e.type == "handled"][0]).text == "You said: again"


async def test_turn_of_a_vanished_client_is_bounded_by_the_timeout(hanging) -> None:
    server, tool = hanging
    client = client_for(server)
    await client.connect()
    await client.write_event(Transcript("Warte auf die Garage", language="de").event())
    assert (await read(client)).type == "handled-start"
    await client.disconnect()
    for _ in range(250):
        if not server.turns:
            break
        await asyncio.sleep(0.02)
    assert not server.turns
    await asyncio.wait_for(tool.cancelled.wait(), 5)


async def test_a_turn_past_the_timeout_gets_a_spoken_timeout(hanging) -> None:
    server, tool = hanging
    async with client_for(server) as client:
        await client.write_event(
            Transcript("Warte auf die Garage", context={"conversation_id": "c7"}, language="de").event())
        events = await read_turn(client)
    assert [e.type for e in events] == ["handled-start", "not-handled", "handled-stop"]
    not_handled = NotHandled.from_event(events[1])
    assert not_handled.text == phrase("de", "error.timeout")
    assert not_handled.context == {"conversation_id": "c7", "error": "timeout"}
    await asyncio.wait_for(tool.cancelled.wait(), 5)  # the turn's tool was cancelled, not leaked


async def test_failed_turn_speaks_the_agents_error(server: WyomingServer) -> None:
    async with client_for(server) as client:
        await client.write_event(Transcript("fail", context={"conversation_id": "c8"}).event())
        events = await read_turn(client)
    assert [e.type for e in events][-2:] == ["not-handled", "handled-stop"]
    not_handled = NotHandled.from_event(events[-2])
    assert not_handled.text == "Scripted failure."
    assert not_handled.context == {"conversation_id": "c8", "error": "model"}


async def test_unknown_event_gets_an_error_event(server: WyomingServer, agent: ScriptedAgent) -> None:
    async with client_for(server) as client:
        await client.write_event(Event(type="run-satellite", data={"x": 1}))
        await client.write_event(Event(type="audio-chunk", data={"rate": 16000}, payload=b"\0" * 3200))
        await client.write_event(Describe().event())
        errors = [await read(client), await read(client)]
        assert [(e.type, e.data["code"]) for e in errors] == [("error", "unknown_event")] * 2
        assert "run-satellite" in errors[0].data["text"] and "audio-chunk" in errors[1].data["text"]
        assert Info.is_type((await read(client)).type), "the connection goes on: describe is answered"
    assert agent.requests == []


@pytest.mark.parametrize("data", [{}, {"text": ""}, {"text": "   "}, {"text": 42}, {"text": None}])
async def test_transcript_without_text(server: WyomingServer, agent: ScriptedAgent, data: dict) -> None:
    async with client_for(server) as client:
        await client.write_event(Event(type="transcript", data={**data, "language": "de"}))
        event = await read(client)
        assert NotHandled.is_type(event.type)
        assert NotHandled.from_event(event).text == phrase("de", "error.empty")
        assert NotHandled.from_event(event).context == {"error": "empty"}
        await client.write_event(Describe().event())
        assert Info.is_type((await read(client)).type)
    assert agent.requests == []


async def test_transcript_of_100_kb(server: WyomingServer, agent: ScriptedAgent) -> None:
    text = "turn on the light " * (100_000 // 18)
    assert len(text) > MAX_REQUEST_CHARS
    async with client_for(server) as client:
        await client.write_event(Transcript(text, context={"conversation_id": "big"}).event())
        event = await read(client)
        assert NotHandled.is_type(event.type)
        assert NotHandled.from_event(event).text == phrase("en", "error.too_long")
        assert NotHandled.from_event(event).context == {"conversation_id": "big", "error": "too_long"}
        await client.write_event(Transcript("short").event())
        assert any(e.type == "handled" for e in await read_turn(client))
    assert [r.text for r in agent.requests] == ["short"]


async def test_second_transcript_while_a_turn_runs_is_refused(server: WyomingServer, agent: ScriptedAgent) -> None:
    async with client_for(server) as client:
        await client.write_event(Transcript("wait").event())
        assert (await read(client)).type == "handled-start"
        assert (await read(client)).type == "handled-chunk"
        await client.write_event(Transcript("second").event())
        busy = await read(client)
        assert NotHandled.from_event(busy).text == phrase("en", "error.busy")
        agent.gate.set()
        assert [e.type for e in await read_turn(client)] == ["handled-chunk", "handled", "handled-stop"]
    assert [r.text for r in agent.requests] == ["wait"]


@pytest.mark.parametrize(
    "raw, code",
    [
        (b"{not json\n", "bad_json"),
        (b"[1, 2]\n", "bad_event"),
        (b'{"type": "transcript", "data": "text"}\n', "bad_event"),
        (b'{"type": "transcript", "data_length": -4}\n', "bad_event"),
        (b'{"type": "transcript", "data_length": 5}\n{oops', "bad_json"),
        (b'{"type": "transcript", "data_length": 2000000}\n' + b" " * 2_000_000, "too_large"),
        (b'{"type": "transcript", "data": {"text": "' + b"x" * 200_000 + b'"}}\n', "too_large"),
    ],
    ids=["bad-json", "not-object", "data-not-object", "negative-length", "bad-data-block", "huge-data", "huge-line"],
)
async def test_malformed_event_gets_an_error_and_the_connection_survives(server: WyomingServer, raw: bytes, code: str) -> None:
    """After a first good event (a first line that is no event drops the connection: see
    test_wyoming_hardening)."""
    reader, writer = await raw_connection(server)
    try:
        writer.write(b'{"type": "ping", "data": {"text": "first"}}\n')
        writer.write(raw)
        writer.write(b'{"type": "describe"}\n')
        await writer.drain()
        client = AsyncTcpClient("127.0.0.1", server.port)
        client._reader, client._writer = reader, writer  # reuse the wyoming reader on the raw socket
        assert Pong.is_type((await read(client)).type)
        error = await read(client)
        assert error.type == "error" and error.data["code"] == code and error.data["text"]
        assert Info.is_type((await read(client)).type)
    finally:
        writer.close()


async def test_stop_cancels_running_turns(agent: ScriptedAgent) -> None:
    server = WyomingServer(agent, hub_options(validate({})).wyoming, host="127.0.0.1", port=0, discovery=False)
    await server.start()
    client = client_for(server)
    await client.connect()
    await client.write_event(Transcript("hang").event())
    assert (await read(client)).type == "handled-start"
    await server.stop()
    assert not server.turns and agent.closed == ["hang"]
    await client.disconnect()


async def test_default_port_comes_from_the_options(agent: ScriptedAgent) -> None:
    server = WyomingServer(agent, hub_options(validate({"wyoming_port": 10611})).wyoming, discovery=False)
    assert server.port == 10611
    assert WyomingServer(agent, hub_options(validate({})).wyoming).port == 10500
    assert server.info().handle[0].models[0].languages == agent.languages
