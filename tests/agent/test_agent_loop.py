"""The turn loop's logic, with a scripted engine and a small in-test tool."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from hub.agent.agent import Agent
from hub.agent.types import ReplyChunk, ToolFinished, ToolStarted, TurnDone, TurnRequest
from hub.config import validate
from hub.options import hub_options
from hub.core.tools import ToolContext, ToolRegistry, ToolResult, ToolTraits
from hub.core.messages import ToolSpec
from hub.llm.types import Done, EngineBusy, EngineError, GenerationRequest, PromptTooLong, MalformedToolCall
from hub.settings import RuntimeSettings

from helpers.scripted_engine import LOOPS, ScriptedEngine, call, text


class LampTool(ToolTraits):
    """A lamp the tests can look at."""

    spec = ToolSpec("set_lamp", "Switch the lamp", {
        "type": "object", "properties": {"on": {"type": "boolean"}}, "required": ["on"],
        "additionalProperties": False})

    def __init__(self) -> None:
        self.on = False
        self.calls = 0

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        self.calls += 1
        self.on = args["on"]
        return ToolResult(ok=True, data={"on": self.on}, speech="The lamp is " + ("on." if self.on else "off."))


def make_agent(engine: ScriptedEngine, **options: Any) -> tuple[Agent, LampTool]:
    config = validate({"fast_path": False, **options})
    registry = ToolRegistry()
    lamp = LampTool()
    registry.register(lamp)
    agent = Agent(engine=engine, registry=registry, settings=RuntimeSettings(hub_options(config).settings), options=hub_options(config).agent,
                  clock_text=lambda: "Monday 2026-11-30 08:00")
    return agent, lamp


def all_text(request: GenerationRequest) -> str:
    return "\n".join(m.content for m in request.messages)


async def test_second_turn_relies_on_the_first() -> None:
    def second(request: GenerationRequest):
        assert "My name is Ada." in all_text(request)
        assert "Nice to meet you, Ada." in all_text(request)
        return text("Your name is Ada.")

    engine = ScriptedEngine([text("Nice to meet ", "you, Ada."), second])
    agent, _ = make_agent(engine)
    first = await agent.ask(TurnRequest("My name is Ada.", conversation_id="c1"))
    result = await agent.ask(TurnRequest("What is my name?", conversation_id="c1"))
    assert first.reply == "Nice to meet you, Ada."
    assert result.ok and result.reply == "Your name is Ada."
    # each turn only appends: the first request's messages are a prefix of the second's
    first_messages = engine.requests[0].messages
    assert engine.requests[1].messages[: len(first_messages)] == first_messages


async def test_other_conversations_do_not_leak() -> None:
    def other(request: GenerationRequest):
        assert "Ada" not in all_text(request)
        return text("I don't know your name.")

    agent, _ = make_agent(ScriptedEngine([text("Hello Ada."), other]))
    await agent.ask(TurnRequest("My name is Ada.", conversation_id="a"))
    result = await agent.ask(TurnRequest("What is my name?", conversation_id="b"))
    assert result.reply == "I don't know your name."


async def test_tool_round_executes_and_feeds_the_result_back() -> None:
    def after_tool(request: GenerationRequest):
        last = request.messages[-1]
        assert last.role == "tool" and last.name == "set_lamp" and '"on": true' in last.content
        assert request.messages[-2].tool_calls[0].name == "set_lamp"
        return text("Done, the lamp is on.")

    engine = ScriptedEngine([[call("set_lamp", on=True)], after_tool])
    agent, lamp = make_agent(engine)
    events = [e async for e in agent.run(TurnRequest("Lamp on please", conversation_id="t"))]
    kinds = [type(e) for e in events]
    assert kinds.index(ToolStarted) < kinds.index(ToolFinished) < kinds.index(ReplyChunk) < kinds.index(TurnDone)
    result = events[-1].result
    assert lamp.on and lamp.calls == 1
    assert result.reply == "Done, the lamp is on."
    assert [f.call.name for f in result.tool_calls] == ["set_lamp"]


async def test_malformed_call_gets_one_error_result_then_the_model_corrects_itself() -> None:
    def retry(request: GenerationRequest):
        assert "malformed_call" in request.messages[-1].content
        return [call("set_lamp", on=True)]

    engine = ScriptedEngine([[MalformedToolCall("<tool_call>{oops", "invalid JSON")], retry, text("The lamp is on.")])
    agent, lamp = make_agent(engine)
    result = await agent.ask(TurnRequest("Lamp on"))
    assert lamp.on and result.reply == "The lamp is on."
    assert [f.ok for f in result.tool_calls] == [False, True]


async def test_second_bad_call_ends_the_turn_with_a_spoken_failure() -> None:
    engine = ScriptedEngine([[call("set_lamp", on="yes")], [call("no_such_tool")]])
    agent, lamp = make_agent(engine)
    result = await agent.ask(TurnRequest("Lamp on"))
    assert len(engine.requests) == 2  # one correction allowed, no third round
    assert not lamp.on
    assert result.tool_calls[0].data["error"] == "invalid_arguments"
    assert result.tool_calls[1].data["error"] == "unknown_tool"
    assert result.reply  # a spoken failure, not silence


async def test_tool_rounds_are_capped() -> None:
    engine = ScriptedEngine([[call("set_lamp", on=True)]] * 3)
    agent, lamp = make_agent(engine, max_tool_rounds=2)
    result = await agent.ask(TurnRequest("Flash the lamp"))
    assert len(engine.requests) == 3 and lamp.calls == 2
    assert result.reply == "The lamp is on."


async def test_history_trimming_drops_whole_old_turns_and_keeps_calls_with_results() -> None:
    rounds = []
    for i in range(6):
        rounds += [[call("set_lamp", on=bool(i % 2))], text(f"Answer number {i} is here with several words.")]
    engine = ScriptedEngine(rounds)
    agent, _ = make_agent(engine, history_tokens=60)
    for i in range(6):
        await agent.ask(TurnRequest(f"Request {i} with a few more words in it", conversation_id="h"))
    messages = agent.conversations.get("h").messages
    assert "Request 0" not in messages[0].content
    assert messages[0].role == "user"
    assert "Request 5" in messages[-4].content
    for index, message in enumerate(messages):
        if message.role == "tool":
            assert messages[index - 1].tool_calls, "a result lost its call"


async def test_timeout_answers_in_time_and_frees_the_conversation() -> None:
    slow = ScriptedEngine([text(*[f"word{i} " for i in range(50)]), text("Fast answer.")], delay=0.2)
    agent, _ = make_agent(slow, turn_timeout=1)
    result = await agent.ask(TurnRequest("Tell me a long story", conversation_id="slow", language="de"))
    assert not result.ok and result.error == "timeout"
    assert result.language == "de"
    slow._delay = 0
    again = await agent.ask(TurnRequest("Quick one", conversation_id="slow"))
    assert again.ok and again.reply == "Fast answer."


@pytest.mark.parametrize(("request_text", "code"), [("", "empty"), ("   ", "empty"), ("x" * 5000, "too_long")])
async def test_bad_requests_get_a_clear_error_without_the_model(request_text: str, code: str) -> None:
    engine = ScriptedEngine([])
    agent, _ = make_agent(engine)
    result = await agent.ask(TurnRequest(request_text))
    assert not result.ok and result.error == code and result.reply
    assert engine.requests == []


async def test_engine_errors_become_spoken_errors() -> None:
    agent, _ = make_agent(ScriptedEngine([], fail_with=EngineBusy("queue full")))
    busy = await agent.ask(TurnRequest("hello", language="fr"))
    assert busy.error == "busy" and busy.language == "fr"
    agent, _ = make_agent(ScriptedEngine([], fail_with=EngineError("model crashed")))
    broken = await agent.ask(TurnRequest("hello"))
    assert broken.error == "model" and broken.reply


async def test_reply_cap_ends_on_a_sentence_and_stops_generating() -> None:
    engine = ScriptedEngine([text("First sentence here. ", "Second sentence is longer than the cap allows. ",
                                  "Third sentence ends it. ", "Fourth sentence never streams.")])
    agent, _ = make_agent(engine, max_reply_chars=50)
    result = await agent.ask(TurnRequest("talk"))
    assert result.reply == "First sentence here."
    # halted once the second sentence was seen whole (the third piece), and the round's Done
    # still read: its tokens are counted
    assert engine.requests[0].halt.is_set()
    timings = result.timings
    assert (timings.model_rounds, timings.model.prompt_tokens, timings.model.completion_tokens) == (1, 10, 3)


async def test_a_round_that_repeats_itself_is_halted_and_its_tokens_counted() -> None:
    engine = ScriptedEngine([text(*[LOOPS["sentence"]] * 40)])
    agent, _ = make_agent(engine)
    result = await agent.ask(TurnRequest("talk"))
    assert result.reply == LOOPS["sentence"].strip()
    timings = result.timings
    assert timings.model_rounds == 1 and timings.model.prompt_tokens == 10 and 2 <= timings.model.completion_tokens < 40


async def test_turns_of_one_conversation_run_in_arrival_order() -> None:
    def second(request: GenerationRequest):
        assert "First answer." in all_text(request)
        return text("Second answer.")

    engine = ScriptedEngine([text("First ", "answer."), second], delay=0.05)
    agent, _ = make_agent(engine)
    first, second_result = await asyncio.gather(
        agent.ask(TurnRequest("one", conversation_id="o")), agent.ask(TurnRequest("two", conversation_id="o")))
    assert (first.reply, second_result.reply) == ("First answer.", "Second answer.")


async def test_report_reaches_the_next_turn() -> None:
    def follow_up(request: GenerationRequest):
        assert "The washing is done." in all_text(request)
        return text("Yes, it finished.")

    agent, _ = make_agent(ScriptedEngine([text("Started."), follow_up]))
    await agent.ask(TurnRequest("Start the washing machine", conversation_id="w"))
    await agent.report("w", "The washing is done.")
    result = await agent.ask(TurnRequest("Is the washing done?", conversation_id="w"))
    assert result.reply == "Yes, it finished."


async def test_a_reply_cut_by_max_tokens_ends_on_its_last_whole_sentence() -> None:
    def cut(request: GenerationRequest):
        return text("A heat pump moves heat. ", "When sunlight")

    class CutEngine(ScriptedEngine):
        async def stream(self, request):
            async for delta in super().stream(request):
                if isinstance(delta, Done):
                    delta.usage.stop_reason = "length"
                yield delta

    agent, _ = make_agent(CutEngine([cut]))
    result = await agent.ask(TurnRequest("Explain heat pumps"))
    assert result.reply == "A heat pump moves heat."
    agent, _ = make_agent(ScriptedEngine([cut]))  # a reply that ended by itself keeps its end
    assert (await agent.ask(TurnRequest("Explain heat pumps"))).reply == "A heat pump moves heat. When sunlight."


async def test_history_too_long_for_the_context_is_dropped_oldest_first() -> None:
    class SmallContext(ScriptedEngine):
        async def stream(self, request):
            if len(request.messages) > 4:  # system + at most one old turn + the new message
                self.requests.append(request)
                raise PromptTooLong("prompt does not fit")
            async for delta in super().stream(request):
                yield delta

    engine = SmallContext([text("One."), text("Two."), text("Three.")])
    agent, _ = make_agent(engine)
    for word in ("first", "second", "third"):
        result = await agent.ask(TurnRequest(f"Say the {word} thing", conversation_id="long"))
        assert result.ok, result
    assert result.reply == "Three."
    assert "first" not in all_text(engine.requests[-1])


async def test_every_model_round_of_a_spoken_turn_carries_its_decode_gate() -> None:
    engine = ScriptedEngine([[call("set_lamp", on=True)], text("The lamp is on.")])
    agent, _ = make_agent(engine)
    gate = threading.Event()
    gate.set()
    await agent.ask(TurnRequest("Turn the lamp on.", conversation_id="c1", decode_gate=gate))
    assert len(engine.requests) == 2 and all(r.decode_gate is gate for r in engine.requests)
