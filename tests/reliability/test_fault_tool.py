"""Fault: a tool that never returns. The turn ends at turn_timeout with error.timeout, the tool's
task is cancelled, the conversation is free for its next turn and other conversations go on.

The model's judgement is not what is tested here (which tool to call), so the engine is scripted;
the agent, its registry and the Wyoming server are the real ones.
"""

from __future__ import annotations

import asyncio

import pytest
from wyoming.asr import Transcript
from wyoming.client import AsyncTcpClient

from hub.agent.types import TurnRequest
from hub.config import validate
from hub.options import hub_options
from hub.interfaces.wyoming.server import WyomingServer
from hub.llm.types import GenerationRequest
from hub.locales import phrase

from helpers.hanging_agent import make_agent
from helpers.scripted_engine import ScriptedEngine, call, text

pytestmark = pytest.mark.timeout(60)


def no_half_turns(request: GenerationRequest) -> None:
    """Every assistant tool call in the history is followed by its results, and the timed-out
    request left nothing behind."""
    messages = request.messages
    for index, message in enumerate(messages):
        if message.tool_calls:
            following = messages[index + 1 : index + 1 + len(message.tool_calls)]
            assert [m.role for m in following] == ["tool"] * len(message.tool_calls), "a call lost its result"
    assert not any("garage" in m.content.lower() and m.role == "user" for m in messages[:-1])


async def test_hanging_tool_times_out_is_cancelled_and_frees_the_conversation() -> None:
    def next_turn(request: GenerationRequest):
        no_half_turns(request)
        return text("Still here.")

    agent, tool = make_agent(ScriptedEngine([[call("wait_for_garage")], next_turn]), turn_timeout=2)
    result = await asyncio.wait_for(
        agent.ask(TurnRequest("Warte auf die Garage", conversation_id="g", language="de")), 20)
    assert tool.started.is_set()
    assert (result.ok, result.error, result.language) == (False, "timeout", "de")
    assert result.reply == phrase("de", "error.timeout")
    await asyncio.wait_for(tool.cancelled.wait(), 5)
    assert not agent.conversations.get_or_create("g", "de").lock.locked()

    again = await asyncio.wait_for(agent.ask(TurnRequest("Are you there?", conversation_id="g")), 20)
    assert again.ok and again.reply == "Still here."


async def test_other_conversations_answer_while_a_tool_hangs() -> None:
    engine = ScriptedEngine([[call("wait_for_garage")], text("Hello from b.")])
    agent, tool = make_agent(engine, turn_timeout=30)
    hanging = asyncio.create_task(agent.ask(TurnRequest("Wait for the garage", conversation_id="a")))
    await asyncio.wait_for(tool.started.wait(), 10)
    other = await asyncio.wait_for(agent.ask(TurnRequest("Hi", conversation_id="b")), 20)
    assert other.ok and other.reply == "Hello from b."
    assert not hanging.done(), "conversation a is still waiting for its tool, b did not wait for it"
    hanging.cancel()
    await asyncio.gather(hanging, return_exceptions=True)
    await asyncio.wait_for(tool.cancelled.wait(), 5)


async def test_timeout_is_spoken_over_wyoming_and_the_connection_goes_on() -> None:
    """Through the real Wyoming server: not-handled with the localized timeout sentence, then the
    same connection's next transcript is answered."""
    engine = ScriptedEngine([[call("wait_for_garage")], text("Done now.")])
    agent, tool = make_agent(engine, turn_timeout=2)
    server = WyomingServer(agent, hub_options(validate({"turn_timeout": 2})).wyoming, host="127.0.0.1", port=0,
                           discovery=False)
    await server.start()
    try:
        async with AsyncTcpClient("127.0.0.1", server.port) as client:
            events = await _turn(client, "Attends le garage", "fr")
            assert events[-2].type == "not-handled"
            assert events[-2].data["text"] == phrase("fr", "error.timeout")
            await asyncio.wait_for(tool.cancelled.wait(), 5)
            events = await _turn(client, "Anything else?", "en")
            assert events[-2].type == "handled" and events[-2].data["text"] == "Done now."
    finally:
        await server.stop()


async def _turn(client: AsyncTcpClient, words: str, language: str) -> list:
    await client.write_event(Transcript(text=words, language=language).event())
    events = []
    while not events or events[-1].type != "handled-stop":
        event = await asyncio.wait_for(client.read_event(), 20)
        assert event is not None, "the server closed the connection"
        events.append(event)
    return events
