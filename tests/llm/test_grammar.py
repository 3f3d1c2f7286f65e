"""The constrained-call schema: only allowed tools, only candidate entities."""

from __future__ import annotations

import json

import pytest
from llama_cpp.llama_grammar import json_schema_to_gbnf

from hub.llm.grammar import ANSWER, constrained_delta, tool_call_grammar, tool_call_schema
from hub.core.messages import ToolSpec
from hub.llm.types import EngineError, MalformedToolCall, TextDelta, ToolCallDelta, ToolConstraint

TURN_ON = ToolSpec("turn_on", "Turn on", {
    "type": "object", "properties": {"entity_id": {"type": "string"}}, "required": ["entity_id"]},
    entity_args=("entity_id",))
SET_LIGHT = ToolSpec("set_light", "Set a light", {
    "type": "object",
    "properties": {"entity_id": {"type": "string"}, "brightness": {"type": "integer"},
                   "color": {"type": "string"}},
    "required": ["entity_id", "brightness"]}, entity_args=("entity_id",))
GET_TIME = ToolSpec("get_time", "What time is it", {"type": "object", "properties": {}})
GROUP = ToolSpec("group_on", "Several at once", {
    "type": "object", "properties": {"targets": {"type": "array", "items": {"type": "string"}}},
    "required": ["targets"]}, entity_args=("targets",))


def test_one_alternative_per_allowed_tool_with_entity_enums() -> None:
    schema = tool_call_schema([TURN_ON, SET_LIGHT, GET_TIME], ToolConstraint(("turn_on", "set_light"), ("light.a", "light.b")))
    alternatives = schema["anyOf"]
    assert [a["properties"]["name"] for a in alternatives] == [{"const": "turn_on"}, {"const": "set_light"}]
    for alternative in alternatives:
        arguments = alternative["properties"]["arguments"]
        assert arguments["properties"]["entity_id"]["enum"] == ["light.a", "light.b"]
        assert arguments["additionalProperties"] is False
    assert TURN_ON.parameters["properties"]["entity_id"] == {"type": "string"}  # the spec is not mutated


def test_single_tool_needs_no_anyof_and_grammar_lists_only_candidates() -> None:
    constraint = ToolConstraint(("turn_on",), ("switch.kettle",))
    schema = tool_call_schema([TURN_ON, SET_LIGHT], constraint)
    assert schema["properties"]["name"] == {"const": "turn_on"}
    gbnf = json_schema_to_gbnf(json.dumps(schema))
    assert '"\\"switch.kettle\\""' in gbnf and "set_light" not in gbnf
    assert tool_call_grammar([TURN_ON], constraint) is not None


def test_optional_arguments_can_be_dropped_and_the_spec_names_entity_arguments() -> None:
    constraint = ToolConstraint(("set_light", "group_on"), ("light.a",))
    lean = tool_call_schema([SET_LIGHT, GROUP], constraint, keep_optional=False)
    set_light, group = lean["anyOf"]
    assert set(set_light["properties"]["arguments"]["properties"]) == {"entity_id", "brightness"}
    targets = group["properties"]["arguments"]["properties"]["targets"]
    assert targets["items"]["enum"] == ["light.a"] and targets["minItems"] == 1


def test_an_argument_the_spec_does_not_name_is_left_as_it_is() -> None:
    # an OpenAI client's tool: its entity_id is the client's own string, not a candidate of the home
    client_tool = ToolSpec("turn_on", "Turn on", TURN_ON.parameters)
    schema = tool_call_schema([client_tool], ToolConstraint(("turn_on",), ()))
    assert schema["properties"]["arguments"]["properties"]["entity_id"] == {"type": "string"}


def test_no_callable_tool_is_a_clear_error() -> None:
    with pytest.raises(EngineError, match="no allowed tool"):
        tool_call_schema([TURN_ON], ToolConstraint(("turn_on",), ()))
    with pytest.raises(EngineError, match="no allowed tool"):
        tool_call_schema([TURN_ON], ToolConstraint(("unknown",), ("light.a",)))
    # a tool without entity arguments stays callable with no candidates
    assert tool_call_schema([GET_TIME], ToolConstraint(("get_time",), ()))["properties"]["name"]["const"] == "get_time"


def test_constrained_output_becomes_a_call_an_answer_or_a_malformed_call() -> None:
    delta = constrained_delta('{"name": "turn_on", "arguments": {"entity_id": "light.a"}}', "call_1", "stop")
    assert isinstance(delta, ToolCallDelta)
    assert (delta.call.name, delta.call.arguments, delta.call.id) == ("turn_on", {"entity_id": "light.a"}, "call_1")
    assert constrained_delta('{"name": "answer", "arguments": {"text": "It is on."}}', "c", "stop") == TextDelta("It is on.")
    for cut in ('{"name": "turn_on", "argum', '{"name": "turn_on"}'):
        delta = constrained_delta(cut, "call_1", "length")
        assert isinstance(delta, MalformedToolCall) and "(length)" in delta.error


def test_an_answer_in_words_is_offered_beside_the_calls() -> None:
    """A question or a chat is never forced into a device action (issue 16)."""
    schema = tool_call_schema([TURN_ON], ToolConstraint(("turn_on",), ("light.a",), answer=True))
    names = [a["properties"]["name"]["const"] for a in schema["anyOf"]]
    assert names == ["turn_on", ANSWER]
    gbnf = json_schema_to_gbnf(json.dumps(schema))
    assert 'answer' in gbnf
    # with no callable tool, answering is still possible
    only = tool_call_schema([TURN_ON], ToolConstraint(("turn_on",), (), answer=True))
    assert only["properties"]["name"]["const"] == ANSWER
