"""Wyoming: the languages the hub announces, and per-turn mode overrides from the transcript context."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from wyoming.client import AsyncTcpClient
from wyoming.event import Event
from wyoming.handle import Handled, NotHandled
from wyoming.info import Describe, Info

from hub.agent.agent import Agent
from hub.config import validate
from hub.options import hub_options
from hub.core.tools import ToolRegistry
from hub.interfaces.wyoming.server import WyomingServer, turn_overrides
from hub.llm.types import GenerationRequest, Reasoning, ReasoningMode
from hub.locales import SUPPORTED_LANGUAGES
from hub.settings import RuntimeSettings
from helpers.scripted_engine import ScriptedEngine, text
from helpers.wyoming_fake_agent import ScriptedAgent

pytestmark = pytest.mark.timeout(30)
BUDGET = ReasoningMode.BUDGET


async def started(server: WyomingServer) -> WyomingServer:
    await server.start()
    return server


async def turn(server: WyomingServer, data: dict[str, Any]) -> Event:
    """Send one transcript; the final handled / not-handled event."""
    async with AsyncTcpClient("127.0.0.1", server.port) as client:
        await client.write_event(Event(type="transcript", data=data))
        while True:
            event = await asyncio.wait_for(client.read_event(), 10)
            assert event is not None
            if Handled.is_type(event.type) or NotHandled.is_type(event.type):
                return event


def real_agent(engine: ScriptedEngine, **options: Any) -> Agent:
    config = validate({"fast_path": False, **options})
    return Agent(engine=engine, registry=ToolRegistry(), settings=RuntimeSettings(hub_options(config).settings), options=hub_options(config).agent,
                 clock_text=lambda: "Monday 2026-11-30 08:00")


async def test_describe_lists_all_35_languages_of_the_real_agent() -> None:
    agent = real_agent(ScriptedEngine([]))
    server = await started(WyomingServer(agent, hub_options(validate({})).wyoming, host="127.0.0.1", port=0, discovery=False))
    try:
        async with AsyncTcpClient("127.0.0.1", server.port) as client:
            await client.write_event(Describe().event())
            event = await asyncio.wait_for(client.read_event(), 10)
    finally:
        await server.stop()
    languages = Info.from_event(event).handle[0].models[0].languages
    assert languages == list(SUPPORTED_LANGUAGES) and len(languages) == 35


@pytest.mark.parametrize("context, conversational, reasoning", [
    ({}, None, None),
    ({"conversational": False}, False, None),
    ({"conversational": True, "reasoning": "off"}, True, Reasoning(ReasoningMode.OFF, 256)),
    ({"reasoning": "on"}, None, Reasoning(ReasoningMode.ON, 256)),
    ({"reasoning": "Budget"}, None, Reasoning(BUDGET, 256)),
    ({"reasoning": "budget", "reasoning_budget": 16}, None, Reasoning(BUDGET, 16)),
    ({"reasoning_budget": 0}, None, Reasoning(BUDGET, 0)),
    # bad values are dropped one by one; the rest still applies
    ({"conversational": "yes", "reasoning": "budget"}, None, Reasoning(BUDGET, 256)),
    ({"conversational": 1}, None, None),
    ({"reasoning": "maybe", "conversational": False}, False, None),
    ({"reasoning": ["on"]}, None, None),
    ({"reasoning": "budget", "reasoning_budget": -1}, None, Reasoning(BUDGET, 256)),
    ({"reasoning_budget": 9000}, None, None),
    ({"reasoning_budget": True}, None, None),
    ({"reasoning_budget": "16"}, None, None),
    ({"reasoning_budget": 16.5}, None, None),
])
def test_turn_overrides(context: dict, conversational: bool | None, reasoning: Reasoning | None) -> None:
    assert turn_overrides(context, 256) == (conversational, reasoning)


async def test_context_overrides_reach_the_turn_request_and_bad_ones_are_ignored(caplog) -> None:
    agent = ScriptedAgent()
    server = await started(WyomingServer(agent, hub_options(validate({"reasoning_budget": 64})).wyoming, host="127.0.0.1", port=0,
                                         discovery=False))
    caplog.set_level(logging.DEBUG, logger="hub.interfaces.wyoming.server")
    try:
        good = await turn(server, {"text": "hi", "context": {
            "conversation_id": "c1", "conversational": False, "reasoning": "budget", "reasoning_budget": 16}})
        defaulted = await turn(server, {"text": "hi", "context": {"conversation_id": "c2", "reasoning": "budget"}})
        bad = await turn(server, {"text": "hi", "context": {
            "conversation_id": "c3", "conversational": "sometimes", "reasoning": "loud", "reasoning_budget": "lots"}})
    finally:
        await server.stop()
    assert all(Handled.is_type(e.type) for e in (good, defaulted, bad))
    first, second, third = agent.requests
    assert (first.conversational, first.reasoning) == (False, Reasoning(BUDGET, 16))
    assert (second.conversational, second.reasoning) == (None, Reasoning(BUDGET, 64))  # the option's budget
    assert (third.conversational, third.reasoning) == (None, None)
    ignored = [r.getMessage() for r in caplog.records if r.getMessage().startswith("ignoring context.")]
    assert len(ignored) == 3 and all(r.levelno == logging.DEBUG for r in caplog.records
                                     if r.getMessage().startswith("ignoring context."))


async def test_budget_default_follows_the_runtime_setting() -> None:
    config = validate({})
    settings = RuntimeSettings(hub_options(config).settings)
    settings.set("reasoning_budget", 99)
    agent = ScriptedAgent()
    server = await started(WyomingServer(agent, hub_options(config).wyoming, host="127.0.0.1", port=0, discovery=False,
                                         settings=settings))
    try:
        await turn(server, {"text": "hi", "context": {"reasoning": "budget"}})
    finally:
        await server.stop()
    assert agent.requests[0].reasoning == Reasoning(BUDGET, 99)


async def test_overrides_reach_the_model_through_the_real_agent() -> None:
    engine = ScriptedEngine([text("Fine."), text("Also fine.")])
    agent = real_agent(engine, conversational_mode=True, reasoning="off")
    server = await started(WyomingServer(agent, hub_options(validate({})).wyoming, host="127.0.0.1", port=0, discovery=False))
    try:
        overridden = await turn(server, {"text": "Explain heat pumps", "language": "de", "context": {
            "conversation_id": "w1", "conversational": False, "reasoning_budget": 16}})
        default = await turn(server, {"text": "Explain heat pumps", "context": {"conversation_id": "w2"}})
    finally:
        await server.stop()
    assert Handled.from_event(overridden).text == "Fine." and Handled.from_event(default).text == "Also fine."
    first, second = engine.requests
    assert isinstance(first, GenerationRequest)
    assert (first.conversational, first.reasoning) == (False, Reasoning(BUDGET, 16))
    assert (second.conversational, second.reasoning) == (True, Reasoning(ReasoningMode.OFF, 256))
