"""Issue 16 through the real home tools, policy and agent on the demo home, with a scripted model:
a question never acts, a stand-in does not run the home, replies say only what happened, users
hear sentences (never JSON), runaway output ends, and a confirmation belongs to its asker.

The scripted model plays what small models were seen doing; what is under test is the hub.
"""

from __future__ import annotations

import asyncio
import logging
import re

import pytest

from hub.agent.personas import PersonaBook, home_persona
from hub.agent.prompt import ASSISTANT_INSTRUCTIONS

from hub.core.tools import ToolContext, ToolResult, ToolTraits
from hub.core.messages import ToolSpec
from hub.llm.types import EngineError, GenerationRequest, ModelInfo
from hub.locales import phrase

from async_policy.async_helpers import FakeClock, TestHub, prompt_text
from helpers.scripted_engine import ScriptedEngine, call, text

pytestmark = pytest.mark.timeout(60)

ACTIONS = {"turn_on", "turn_off", "set_light", "set_temperature", "set_position", "media_control",
           "set_volume", "activate_scene", "run_script", "set_fan_speed", "change_volume", "mute",
           "clean_area", "set_humidity", "set_mode"}
JSON_SHAPED = re.compile(r'[{}\[\]]|"\w+"\s*:')


def offered(request: GenerationRequest) -> set[str]:
    return {t.name for t in request.tools}


def hub_for(tmp_path, rounds, *, stand_in: bool = False, **options) -> tuple[TestHub, ScriptedEngine]:
    engine = ScriptedEngine(rounds)
    if stand_in:
        engine.info = ModelInfo("SmolLM2", "llama", "", 2048, 2048, 135_000_000)
    return TestHub(tmp_path, engine, policy_clock=FakeClock(), **options), engine


QUESTIONS = [
    ("en", "Is the desk lamp on?"),
    ("en", "what lights are on?"),
    ("en", "what is the temperature of the thermostat"),
    ("en", "is the front door locked?"),
    ("es", "¿Está encendida la luz de la cocina?"),
    ("de", "Ist das Licht in der Küche an"),
    ("fr", "Est-ce que la lumière de la cuisine est allumée"),
    ("it", "La luce della cucina è accesa?"),
    ("nl", "Staat de keukenlamp aan"),
    ("pl", "Czy światło w kuchni jest włączone"),
    ("pt", "A luz da cozinha está ligada?"),
    ("zh", "厨房的灯开着吗"),
    ("ja", "キッチンの電気はついていますか"),
]


@pytest.mark.parametrize("language,question", QUESTIONS)
async def test_a_question_reads_and_never_acts(tmp_path, language, question) -> None:
    # what small models did with questions: call an action on the device asked about
    hub, engine = hub_for(tmp_path, [[call("turn_on", entity_id="light.kitchen")], text("It is off.")],
                          model_home_control=True)
    result = await hub.ask(question, language=language)
    assert result.ok and hub.state("light.kitchen") == "off" and hub.calls_to("light.kitchen") == []
    assert [(f.call.name, f.call.arguments, f.ok) for f in result.tool_calls] == [
        ("get_state", {"entity_id": "light.kitchen"}, True)], "the action became a look at the state"
    assert engine.requests[0].constraint is None, "no grammar forces a question into a call"
    assert result.reply == "It is off."
    # the prompt declares the same tools as for a command: its cached prefix stays valid
    assert offered(engine.requests[0]) == {t.name for t in hub.agent.stable_request().tools}


@pytest.mark.parametrize("language,command", [("en", "Turn on the kitchen light"), ("en", "Can you turn on the kitchen light?"),
                                              ("de", "Schalte das Licht in der Küche ein"), ("zh", "请打开厨房的灯")])
async def test_a_command_is_offered_the_actions_and_confirmed_from_the_result(tmp_path, language, command) -> None:
    model = [*text("Sure, it is now blue and dimmed."), call("turn_on", entity_id="light.kitchen")]
    hub, engine = hub_for(tmp_path, [model], model_home_control=True)
    result = await hub.ask(command, language=language)
    assert "turn_on" in offered(engine.requests[0])
    assert hub.state("light.kitchen") == "on"
    assert phrase(language, "action.turned_on", name="Kitchen light") in result.reply
    assert len(engine.requests) == 1, "the model does not get to phrase what was done"


async def test_a_stand_in_model_is_offered_no_device_action_unless_allowed(tmp_path, caplog) -> None:
    hub, engine = hub_for(tmp_path, [[call("turn_on", entity_id="light.kitchen")], text("Sorry.")], stand_in=True)
    assert not hub.agent.model_acts
    with caplog.at_level(logging.INFO, logger="hub.agent"):
        await hub.agent.start()
        await hub.agent.stop()
    assert "device actions come only from the fast path" in caplog.text
    result = await hub.ask("Tell me something nice")
    tools = offered(engine.requests[0])
    assert not tools & ACTIONS and "get_state" in tools and tools == {t.name for t in hub.agent.stable_request().tools}
    assert hub.state("light.kitchen") == "off" and not any(f.ok and f.call.name in ACTIONS for f in result.tool_calls)
    # a home command the fast path did not carry out is not handed to it at all (issue #28)
    result = await hub.ask("Turn on the kitchen light")
    assert len(engine.requests) == 2 and result.path == "resolution" and hub.state("light.kitchen") == "off"
    allowed, engine = hub_for(tmp_path, [[call("turn_on", entity_id="light.kitchen")]], stand_in=True,
                              model_home_control=True)
    assert allowed.agent.model_acts
    await allowed.ask("Turn on the kitchen light")
    assert "turn_on" in offered(engine.requests[0]) and allowed.state("light.kitchen") == "on"


@pytest.mark.parametrize("language", ["en", "de", "fr", "ja"])
async def test_a_claim_without_a_call_is_replaced_by_what_happened(tmp_path, language) -> None:
    hub, _ = hub_for(tmp_path, [text("Set the heat pump to 21 degrees. Done.")])
    result = await hub.ask("Set the heat pump to 21 degrees.", language=language)
    assert result.reply == phrase(language, "action.nothing_done")
    assert hub.backend.calls == []


async def test_done_after_a_failed_call_is_not_spoken(tmp_path) -> None:
    hub, _ = hub_for(tmp_path, [[call("turn_on", entity_id="light.heat_pump")], text("Done."),
                               [call("turn_on", entity_id="light.heat_pump")]])
    result = await hub.ask("Turn on the heat pump")
    assert "Done" not in result.reply
    assert result.reply == phrase("en", "entity.not_found", name="heat pump")


async def test_a_true_claim_stays(tmp_path) -> None:
    hub, _ = hub_for(tmp_path, [[call("get_state", entity_id="light.desk_lamp")], text("The desk lamp is on.")])
    result = await hub.ask("Is the desk lamp on?")
    assert result.reply == "The desk lamp is on."


class BrokenTool(ToolTraits):
    spec = ToolSpec("order_pizza", "Order a pizza", {"type": "object", "properties": {}})

    async def execute(self, args, ctx: ToolContext) -> ToolResult:
        raise RuntimeError("KeyError: 'crust' at pizza.py:12")


FAULTS = [
    ("unsupported feature", [call("set_temperature", entity_id="light.kitchen", temperature=20)],
     lambda lang: phrase(lang, "error.unsupported", name="Kitchen light")),
    ("invalid color", [call("set_light", entity_id="light.desk_lamp", color="rgb(255,210,174)")],
     lambda lang: phrase(lang, "error.invalid_value", name="Desk lamp")),
    ("out-of-range temperature", [call("set_temperature", entity_id="climate.living_room", temperature=60)],
     lambda lang: phrase(lang, "error.invalid_value", name="Living room thermostat")),
    ("backend down", [call("set_light", entity_id="light.kitchen", brightness=50)],
     lambda lang: phrase(lang, "error.action_failed")),
    ("tool bug", [call("order_pizza")], lambda lang: phrase(lang, "error.action_failed")),
]


@pytest.mark.parametrize("language", ["en", "de", "pl"])
@pytest.mark.parametrize("fault,calls,expected", FAULTS, ids=[f[0] for f in FAULTS])
async def test_faults_are_told_in_a_sentence_of_the_language(tmp_path, language, fault, calls, expected) -> None:
    # the model retries once with the same call, then writes developer text: none of it is spoken
    hub, _ = hub_for(tmp_path, [calls, calls, text('{"error": "unsupported", "message": "cannot"}')])
    hub.registry.register(BrokenTool())
    hub.agent.personas = PersonaBook(home_persona(ASSISTANT_INSTRUCTIONS), home_tools=hub.registry.names())
    if fault == "backend down":
        hub.backend.online = False
    # the request names the device the calls act on (a call on another would not run: agent.call_fit)
    named = {"unsupported feature": "Kitchen light", "invalid color": "Desk lamp",
             "out-of-range temperature": "Living room thermostat", "backend down": "Kitchen light"}
    result = await hub.ask(named.get(fault, "Set it up"), language=language)
    assert result.reply == expected(language)
    assert not JSON_SHAPED.search(result.reply)


@pytest.mark.parametrize("language", ["en", "de", "pl"])
async def test_an_engine_fault_is_a_sentence(tmp_path, language) -> None:
    hub = TestHub(tmp_path, ScriptedEngine([], fail_with=EngineError("llama_decode returned -3")))
    result = await hub.ask("Tell me a joke", language=language)
    assert not result.ok and result.reply == phrase(language, "error.model")


async def test_a_call_written_as_bare_json_is_run(tmp_path) -> None:
    hub, _ = hub_for(tmp_path, [text('{"name": "turn_on", ', '"arguments": {"entity_id": "light.kitchen"}}.')],
                     model_home_control=True)
    result = await hub.ask("Turn on the kitchen light")
    assert hub.state("light.kitchen") == "on"
    assert result.reply == phrase("en", "action.turned_on", name="Kitchen light")


async def test_json_naming_no_offered_tool_is_not_spoken(tmp_path) -> None:
    hub, _ = hub_for(tmp_path, [text('{"name": "check_payment", "arguments": {"item": "sword"}}.')])
    result = await hub.ask("I want the sword")
    assert not JSON_SHAPED.search(result.reply) and result.reply
    assert hub.backend.calls == []


@pytest.mark.parametrize("loop", ["Le Grand Garou, le Grand Garou, " * 40, "I'm not sure how to use a sword. " * 40])
async def test_a_repetition_loop_ends_the_reply(tmp_path, loop) -> None:
    hub = TestHub(tmp_path, ScriptedEngine([text(*[loop[i:i + 7] for i in range(0, len(loop), 7)])]),
                  max_reply_chars=4000)
    result = await hub.ask("What is the capital of France?")
    assert len(result.reply) < 60 and result.reply
    assert result.reply.count("sword") <= 1 and result.reply.count("Garou") <= 1


class SlowTool(BrokenTool):
    spec = ToolSpec("ask_the_bakery", "Ask the bakery", {"type": "object", "properties": {}})

    async def execute(self, args, ctx: ToolContext) -> ToolResult:
        await asyncio.sleep(10)
        return ToolResult(ok=True)


@pytest.mark.parametrize("language", ["en", "de", "pl"])
async def test_a_tool_past_the_deadline_is_a_sentence(tmp_path, language) -> None:
    hub, _ = hub_for(tmp_path, [[call("ask_the_bakery")]], turn_timeout=1)
    hub.registry.register(SlowTool())
    hub.agent.personas = PersonaBook(home_persona(ASSISTANT_INSTRUCTIONS), home_tools=hub.registry.names())
    result = await hub.ask("Is there bread?", language=language)
    assert not result.ok and result.reply == phrase(language, "error.timeout")


async def test_a_yes_counts_only_from_the_client_that_was_asked(tmp_path) -> None:
    hub, engine = hub_for(tmp_path, [[call("turn_off", entity_id="lock.front_door")]], model_home_control=True)
    asked = await hub.ask("unlock the front door", source="mqtt", client="mqtt:kitchen-panel")
    assert "?" in asked.reply
    for source, client in (("mqtt", "mqtt:someone-else"), ("mqtt", None), ("rest", "mqtt:kitchen-panel")):
        stranger = await hub.ask("yes", source=source, client=client)
        assert stranger.reply == phrase("en", "action.nothing_done") and hub.state("lock.front_door") == "locked"
    assert len(engine.requests) == 1, "a stranger's yes does not reach the model either"
    owner = await hub.ask("yes", source="mqtt", client="mqtt:kitchen-panel")
    assert owner.path == "confirmation" and hub.state("lock.front_door") == "unlocked"


async def test_without_ids_a_client_continues_only_a_conversation_that_waits_for_an_answer(tmp_path) -> None:
    def second(request: GenerationRequest):
        assert "Turn on the kitchen light" not in prompt_text(request), "an unrelated request shares no history"
        return [call("turn_off", entity_id="lock.front_door")]

    hub, _ = hub_for(tmp_path, [[call("turn_on", entity_id="light.kitchen")], second, text("Yes to what?")],
                     model_home_control=True)
    first = await hub.ask("Turn on the kitchen light", conversation_id=None, client="wyoming:10.0.0.5/")
    asked = await hub.ask("unlock the front door", conversation_id=None, client="wyoming:10.0.0.5/")
    assert asked.conversation_id != first.conversation_id and "?" in asked.reply
    other = await hub.ask("yes", conversation_id=None, client="wyoming:10.0.0.9/")
    assert other.conversation_id != asked.conversation_id and hub.state("lock.front_door") == "locked"
    confirmed = await hub.ask("yes", conversation_id=None, client="wyoming:10.0.0.5/")
    assert confirmed.conversation_id == asked.conversation_id and confirmed.path == "confirmation"
    assert hub.state("lock.front_door") == "unlocked"
