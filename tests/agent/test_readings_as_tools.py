"""With a model of 1 B or more, the hub's readings are its tools (issue #39 point 4): the same
list, calendar and device readings the direct path answers from, called by the model with the
question's words, through the real agent and registry over the answering home. The model is
scripted (what is under test is what the tools give it); the readings themselves are tested on
the direct path (tests/understanding/test_home_questions.py) and through a real Home Assistant."""

from __future__ import annotations

from pathlib import Path

import pytest

from async_policy.async_helpers import TestHub
from helpers.answering_home import AnsweringHome
from helpers.scripted_engine import ScriptedEngine, call, text
from hub.llm.types import ModelInfo

pytestmark = pytest.mark.timeout(60)


async def model_turn(tmp_path: Path, question: str, tool_call, reply: str):
    """One model turn (fast path off) over the answering home, the model 4 B parameters."""
    home = AnsweringHome(tmp_path / "home")
    await home.start({"todo.personal_tasks": ["Call Liza", "Pay rent"]})
    engine = ScriptedEngine([[tool_call], text(reply)])
    engine.info = ModelInfo("Bolt E4B", "gemma4", "", 8192, 8192, 4_000_000_000)
    readers = [home.registry.get(name) for name in ("list_items", "calendar_events", "weather_forecast")]
    hub = TestHub(tmp_path / "hub", engine, demo_home=False, store=home.store, tools=readers)
    try:
        return await hub.ask(question), engine
    finally:
        await home.stop()


async def test_the_model_reads_the_lists_by_the_questions_words(tmp_path: Path) -> None:
    result, engine = await model_turn(tmp_path, "who do I need to call?", call("list_items", words=["call"]),
                                      "You need to call Liza.")
    (done,) = result.tool_calls
    assert done.ok and done.data["lists"][0]["items"] == ["Call Liza"]
    declared = {t.name: t for t in engine.requests[0].tools}
    assert "words" in declared["list_items"].parameters["properties"]
    assert result.reply == "You need to call Liza."


async def test_the_model_reads_the_calendar_by_the_questions_words(tmp_path: Path) -> None:
    result, engine = await model_turn(tmp_path, "who am I meeting for dinner?",
                                      call("calendar_events", when="next", words=["dinner"]), "Liza, at 19:00.")
    (done,) = result.tool_calls
    assert done.ok and [e["summary"] for e in done.data["events"]] == ["Dinner with Liza"]
    properties = {t.name: t for t in engine.requests[0].tools}["calendar_events"].parameters["properties"]
    assert {"words", "away"} <= set(properties) and "next" in properties["when"]["enum"]


async def test_a_devices_state_carries_its_other_readings(tmp_path: Path) -> None:
    result, _ = await model_turn(tmp_path, "what's the battery of the motion sensor?",
                                 call("get_state", entity_id="binary_sensor.motion_sensor"), "It is at 55 percent.")
    (done,) = result.tool_calls
    device = done.data["device"]
    assert device["battery"]["entity_id"] == "sensor.motion_sensor_battery" and device["battery"]["state"] == "55"
    assert device["signal"]["state"] == "-61"
