"""StreamParser: Gemma 4 and JSON tool calls, thinking blocks, chunk-split invariance, garbage."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from hub.llm.stream_parser import (
    CHANNEL_CLOSE,
    CHANNEL_OPEN,
    GEMMA_CALL_CLOSE,
    GEMMA_CALL_OPEN,
    GEMMA_THOUGHT_OPEN,
    JSON_CALL_CLOSE,
    JSON_CALL_OPEN,
    THINK_CLOSE,
    THINK_OPEN,
    StreamParser,
)
from hub.llm.tool_call_syntax import QUOTE
from hub.core.messages import ToolCall
from hub.llm.types import MalformedToolCall, TextDelta, ThinkingDelta, ToolCallDelta

MARKERS = [
    GEMMA_CALL_OPEN,
    GEMMA_CALL_CLOSE,
    JSON_CALL_OPEN,
    JSON_CALL_CLOSE,
    CHANNEL_OPEN,
    CHANNEL_CLOSE,
    THINK_OPEN,
    THINK_CLOSE,
]


# --- helpers --------------------------------------------------------------------------------


def run(chunks: list[str], start_in_thinking: bool = False) -> list[Any]:
    parser = StreamParser(start_in_thinking=start_in_thinking)
    out: list[Any] = []
    for chunk in chunks:
        out += parser.feed(chunk)
    out += parser.finish()
    return out


def normalize(deltas: list[Any]) -> list[Any]:
    """Merge consecutive text/thinking deltas: the parser may merge them or not."""
    merged: list[Any] = []
    for delta in deltas:
        if merged and type(delta) is type(merged[-1]) and isinstance(delta, (TextDelta, ThinkingDelta)):
            merged[-1] = type(delta)(merged[-1].text + delta.text)
        elif not (isinstance(delta, (TextDelta, ThinkingDelta)) and not delta.text):
            merged.append(delta)
    return merged


def text_of(deltas: list[Any]) -> str:
    return "".join(d.text for d in deltas if isinstance(d, TextDelta))


def thinking_of(deltas: list[Any]) -> str:
    return "".join(d.text for d in deltas if isinstance(d, ThinkingDelta))


def calls_of(deltas: list[Any]) -> list[ToolCall]:
    return [d.call for d in deltas if isinstance(d, ToolCallDelta)]


def split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({0, len(text), *(c % (len(text) + 1) for c in cuts)})
    return [text[a:b] for a, b in zip(points, points[1:])]


def gemma_value(value: Any) -> str:
    """Encode like gemma4.jinja's format_argument(escape_keys=False)."""
    if isinstance(value, str):
        return QUOTE + value + QUOTE
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{gemma_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(gemma_value(v) for v in value) + "]"
    return json.dumps(value)


def gemma_call(name: str, arguments: dict[str, Any]) -> str:
    return f"{GEMMA_CALL_OPEN}call:{name}{gemma_value(arguments)}{GEMMA_CALL_CLOSE}"


def json_call(name: str, arguments: dict[str, Any]) -> str:
    return f"{JSON_CALL_OPEN}{json.dumps({'name': name, 'arguments': arguments})}{JSON_CALL_CLOSE}"


# --- strategies -----------------------------------------------------------------------------

ADVERSARIAL = "<|>{}[],:\"'\\/ \n\tab zäé日"
CALL_MARKERS = [GEMMA_CALL_OPEN, GEMMA_CALL_CLOSE, JSON_CALL_OPEN, JSON_CALL_CLOSE, QUOTE]


def no_marker(text: str, markers: list[str]) -> bool:
    return not any(m in text for m in markers)


plain = st.text(alphabet=ADVERSARIAL + "xyz.!?", max_size=30).filter(lambda t: no_marker(t, MARKERS))
string_values = st.text(alphabet=ADVERSARIAL, max_size=20).filter(lambda t: no_marker(t, CALL_MARKERS))
keys = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True)
names = st.from_regex(r"[a-z_][a-z0-9_]{0,12}", fullmatch=True)
scalars = st.one_of(
    string_values,
    st.integers(-10**12, 10**12),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.booleans(),
    st.none(),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)),
    max_leaves=12,
)
arguments = st.dictionaries(keys, values, max_size=5)


@st.composite
def streams(draw: st.DrawFn) -> tuple[str, str, str, list[tuple[str, dict[str, Any]]]]:
    """A valid stream and what it must parse to: (stream, text, thinking, calls)."""
    parts: list[str] = []
    text: list[str] = []
    thinking: list[str] = []
    calls: list[tuple[str, dict[str, Any]]] = []
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["text", "gemma_thought", "think", "gemma_call", "json_call"]))
        if kind == "text":
            chunk = draw(plain)
            parts.append(chunk)
            text.append(chunk)
        elif kind in ("gemma_thought", "think"):
            content = draw(plain)
            if kind == "gemma_thought":
                parts.append(GEMMA_THOUGHT_OPEN + draw(st.sampled_from(["\n", ""])) + content + CHANNEL_CLOSE)
            else:
                parts.append(THINK_OPEN + content + THINK_CLOSE)
            thinking.append(content.lstrip())
        else:
            name, args = draw(names), draw(arguments)
            parts.append(gemma_call(name, args) if kind == "gemma_call" else json_call(name, args))
            calls.append((name, args))
    stream = "".join(parts)
    # Adjacent text parts must not join into a marker.
    assume(no_marker("".join(text), MARKERS))
    return stream, "".join(text), "".join(thinking), calls


# --- properties -----------------------------------------------------------------------------


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams(), st.lists(st.integers(0, 10_000), max_size=25))
def test_any_split_parses_like_the_whole_stream(case, cuts) -> None:
    stream, text, thinking, calls = case
    whole = run([stream])
    assert text_of(whole) == text
    assert thinking_of(whole) == thinking
    assert [(c.name, c.arguments) for c in calls_of(whole)] == calls
    assert [c.id for c in calls_of(whole)] == [f"call_{i}" for i in range(1, len(calls) + 1)]
    assert not any(isinstance(d, MalformedToolCall) for d in whole)
    assert normalize(run(split(stream, cuts))) == normalize(whole)


@settings(max_examples=60, deadline=None)
@given(streams())
def test_one_character_chunks_parse_like_the_whole_stream(case) -> None:
    stream = case[0]
    assert normalize(run(list(stream))) == normalize(run([stream]))


garbage_pieces = st.sampled_from(
    MARKERS
    + [GEMMA_THOUGHT_OPEN, QUOTE, "call:", "f{", "}", "{", "a:", "1", '"', "[", "]", ",", "<", "|", ">", " ", "\n"]
)
garbage = st.one_of(
    st.text(max_size=200),
    st.lists(garbage_pieces | st.text(max_size=3), max_size=40).map("".join),
    st.binary(max_size=100).map(lambda b: b.decode("latin-1")),
)


@settings(max_examples=400, deadline=None)
@given(garbage, st.lists(st.integers(0, 10_000), max_size=20), st.booleans())
def test_garbage_never_raises_and_splits_do_not_matter(stream, cuts, start_in_thinking) -> None:
    whole = run([stream], start_in_thinking)
    allowed = (TextDelta, ThinkingDelta, ToolCallDelta, MalformedToolCall)
    assert all(isinstance(d, allowed) for d in whole)
    assert normalize(run(split(stream, cuts), start_in_thinking)) == normalize(whole)


@given(st.text(alphabet=st.characters(blacklist_characters="<"), max_size=200))
def test_text_without_markers_passes_through_unchanged_and_at_once(text) -> None:
    parser = StreamParser()
    assert text_of(parser.feed(text)) == text
    assert parser.finish() == []


# --- examples: Gemma 4 ----------------------------------------------------------------------


def test_gemma_call_with_every_value_kind() -> None:
    stream = (
        'OK.<|tool_call>call:set_light{entity_id:<|"|>light.kitchen, "main": {x}<|"|>,'
        "brightness:55,on:true,color:null,temp:-2.5e1,nested:{a:[1,<|\"|>two<|\"|>,{b:false}]},"
        "list:[]}<tool_call|>Done."
    )
    deltas = run([stream])
    assert deltas == [
        TextDelta("OK."),
        ToolCallDelta(
            ToolCall(
                "set_light",
                {
                    "entity_id": 'light.kitchen, "main": {x}',
                    "brightness": 55,
                    "on": True,
                    "color": None,
                    "temp": -25.0,
                    "nested": {"a": [1, "two", {"b": False}]},
                    "list": [],
                },
                "call_1",
            )
        ),
        TextDelta("Done."),
    ]


def test_gemma_call_accepts_spaces_quoted_keys_and_json_strings() -> None:
    stream = '<|tool_call>call:f{ a : 1 , <|"|>b c<|"|>:"x\\"y", "d":[ 1 , 2 ], }<tool_call|>'
    assert calls_of(run([stream])) == [ToolCall("f", {"a": 1, "b c": 'x"y', "d": [1, 2]}, "call_1")]


def test_gemma_call_without_arguments_and_several_calls_get_ids() -> None:
    stream = "<|tool_call>call:stop{}<tool_call|><|tool_call>call:play{n:1}<tool_call|>"
    assert calls_of(run([stream])) == [ToolCall("stop", {}, "call_1"), ToolCall("play", {"n": 1}, "call_2")]


def test_gemma_thinking_then_answer() -> None:
    parser = StreamParser()
    out = parser.feed("<|channel>thought\nThe user wants")
    assert out == [ThinkingDelta("The user wants")]
    assert parser.in_thinking
    out = parser.feed(" light.<channel|>Sure.")
    assert out == [ThinkingDelta(" light."), TextDelta("Sure.")]
    assert not parser.in_thinking
    assert parser.finish() == []


def test_empty_gemma_thought_channel_from_the_prompt_is_harmless() -> None:
    # With thinking off the template ends with an empty channel; a model may echo one.
    assert run(["<|channel>thought\n<channel|>Hello"]) == [TextDelta("Hello")]


def test_channel_that_is_not_a_thought_is_dropped() -> None:
    assert text_of(run(["<|channel>Hi", "<|channel>"])) == "Hi"


# --- examples: JSON calls and <think> -------------------------------------------------------


def test_json_call_variants() -> None:
    stream = (
        '<tool_call>\n{"name": "turn_on", "arguments": {"entity_id": "light.a"}}\n</tool_call>'
        '<tool_call>{"name": "set", "parameters": {"v": [1, {"w": null}]}}</tool_call>'
        '<tool_call>{"name": "s", "arguments": "{\\"x\\": \\"</y>\\"}"}</tool_call>'
        '<tool_call>{"type": "function", "function": {"name": "w", "arguments": {}}}</tool_call>'
        '<tool_call>{"name": "n"}</tool_call>'
    )
    assert calls_of(run([stream])) == [
        ToolCall("turn_on", {"entity_id": "light.a"}, "call_1"),
        ToolCall("set", {"v": [1, {"w": None}]}, "call_2"),
        ToolCall("s", {"x": "</y>"}, "call_3"),
        ToolCall("w", {}, "call_4"),
        ToolCall("n", {}, "call_5"),
    ]


def test_think_block_and_start_in_thinking() -> None:
    assert run(["<think>\nhmm</think>Answer"]) == [ThinkingDelta("hmm"), TextDelta("Answer")]
    parser = StreamParser(start_in_thinking=True)
    assert parser.in_thinking
    assert parser.feed("\n  plan") == [ThinkingDelta("plan")]
    assert parser.feed(" more</th") == [ThinkingDelta(" more")]
    assert parser.feed("ink>\n\nIt is on.") == [TextDelta("\n\nIt is on.")]
    assert not parser.in_thinking


def test_unclosed_thinking_ends_with_the_stream() -> None:
    assert normalize(run(["<think>still thinking <"])) == [ThinkingDelta("still thinking <")]


# --- examples: latency ----------------------------------------------------------------------


def test_only_a_possible_marker_prefix_is_held_back() -> None:
    parser = StreamParser()
    assert parser.feed("Hello <|tool") == [TextDelta("Hello ")]
    assert parser.feed("box> a < b <b>") == [TextDelta("<|toolbox> a < b <b>")]
    assert parser.feed("x <") == [TextDelta("x ")]
    assert parser.feed("3") == [TextDelta("<3")]
    assert parser.feed("<|channel>") == []  # could still become <|channel>thought
    assert parser.feed("Hi") == [TextDelta("Hi")]
    assert parser.finish() == []


def test_held_prefix_is_released_at_finish() -> None:
    parser = StreamParser()
    assert parser.feed("a <tool_ca") == [TextDelta("a ")]
    assert parser.finish() == [TextDelta("<tool_ca")]


def test_long_call_streamed_in_small_chunks_keeps_little_pending() -> None:
    value = "x" * 20_000
    stream = f'<|tool_call>call:say{{text:<|"|>{value}<|"|>}}<tool_call|>'
    parser = StreamParser()
    out = []
    for start in range(0, len(stream), 3):
        out += parser.feed(stream[start : start + 3])
        assert len(parser._pending) <= len(GEMMA_CALL_CLOSE)
    out += parser.finish()
    assert calls_of(out) == [ToolCall("say", {"text": value}, "call_1")]


# --- examples: malformed and stray markers --------------------------------------------------


@pytest.mark.parametrize(
    ("stream", "error_part"),
    [
        ("<|tool_call>call:f{a:b}<tool_call|>", "unquoted value 'b'"),
        ('<|tool_call>call:f{a:<|"|>open}<tool_call|>', "string not closed"),
        ("<|tool_call>call:f{a 1}<tool_call|>", "expected 'key:'"),
        ("<|tool_call>call:f{a:1} extra<tool_call|>", "unexpected text after the arguments"),
        ("<|tool_call>call:f{a:1<tool_call|>", "expected ',' or '}'"),
        ("<|tool_call>call:{a:1}<tool_call|>", "invalid tool name"),
        ("<|tool_call>call:f<tool_call|>", "no '{'"),
        ("<|tool_call>call:f{a:[1,2}<tool_call|>", "expected ',' or ']'"),
        ("<|tool_call>call:f{a:" + "[" * 100 + "<tool_call|>", "nested too deeply"),
        ("<tool_call>{not json}</tool_call>", "invalid JSON"),
        ('<tool_call>{"arguments": {}}</tool_call>', 'no valid "name"'),
        ('<tool_call>{"name": "f", "arguments": "{oops"}</tool_call>', "string that is not JSON"),
        ('<tool_call>{"name": "f", "arguments": [1]}</tool_call>', "must be an object"),
        ('<tool_call>["x"]</tool_call>', "must be a JSON object"),
        ("<tool_call>" + "[" * 5000 + "</tool_call>", "invalid JSON"),
    ],
)
def test_malformed_call_keeps_raw_and_says_why(stream: str, error_part: str) -> None:
    deltas = run(["before ", stream, " after"])
    assert deltas[0] == TextDelta("before ")
    assert isinstance(deltas[1], MalformedToolCall)
    assert deltas[1].raw == stream
    assert error_part in deltas[1].error
    assert deltas[2:] == [TextDelta(" after")]


def test_unterminated_call_at_finish_is_malformed_with_everything_it_wrote() -> None:
    parser = StreamParser()
    assert parser.feed('Sure <|tool_call>call:turn_on{entity_id:<|"|>light.a<|"|>}') == [TextDelta("Sure ")]
    (delta,) = parser.finish()
    assert delta == MalformedToolCall(
        raw='<|tool_call>call:turn_on{entity_id:<|"|>light.a<|"|>}',
        error="tool call not closed: the output ended before <tool_call|>",
    )


def test_call_opened_inside_an_unclosed_call_is_reported_and_the_new_one_parsed() -> None:
    deltas = run(['<tool_call>{"name": "a"<|tool_call>call:b{x:1}<tool_call|>'])
    assert isinstance(deltas[0], MalformedToolCall)
    assert deltas[0].raw == '<tool_call>{"name": "a"'
    assert "before the next call" in deltas[0].error
    assert deltas[1] == ToolCallDelta(ToolCall("b", {"x": 1}, "call_1"))


def test_stray_close_markers_are_dropped() -> None:
    assert run(["a</think>b<channel|>c<tool_call|>d</tool_call>e"]) == [TextDelta("abcde")]
