"""The decode loop driven by a scripted token source: thinking budget edge cases, split markers,
stop strings, limits and the usage it reports. (The same loop runs under the real engine in
tests/llm/test_llama_engine.py and tests/agent/test_modes_real_model.py.)"""

from __future__ import annotations

import itertools
from typing import Callable, Iterator, Sequence

import pytest

from hub.llm.builtin_formats import ChatMLFormat, Gemma4Format
from hub.llm.chat_format import ChatFormat
from hub.llm.reasoning import DecodeLoop, OutOfContext, run_decode_loop, thinking_allowance
from hub.llm.types import (
    Delta,
    MalformedToolCall,
    Reasoning,
    ReasoningMode,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    Usage,
)

CHATML = ChatMLFormat()
GEMMA4 = Gemma4Format()


def budget(tokens: int) -> Reasoning:
    return Reasoning(ReasoningMode.BUDGET, tokens)


ON = Reasoning(ReasoningMode.ON)
OFF = Reasoning(ReasoningMode.OFF)


class ScriptedModel:
    """A token source: plays `first`, then after each bridge the next script (a list of token
    texts, or a function of the bridge count returning an iterator, for endless output)."""

    def __init__(self, first: Sequence[str] | Callable[[], Iterator[str]],
                 *after_bridge: Sequence[str] | Callable[[], Iterator[str]]) -> None:
        self._scripts = [first, *after_bridge]
        self.bridges: list[str] = []
        self.starts = 0

    def __call__(self, bridge: str) -> Iterator[str]:
        self.starts += 1
        if bridge:
            self.bridges.append(bridge)
        script = self._scripts.pop(0) if self._scripts else []
        yield from (script() if callable(script) else script)


def endless(text: str) -> Callable[[], Iterator[str]]:
    return lambda: itertools.repeat(text)


class Ticks:
    """A clock that advances one second per reading."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def run(model: ScriptedModel, fmt: ChatFormat = CHATML, *, reasoning: Reasoning = ON, max_tokens: int = 64,
        start_in_thinking: bool = False) -> tuple[list[Delta], Usage, DecodeLoop]:
    loop = DecodeLoop.for_format(fmt, reasoning, max_tokens, start_in_thinking=start_in_thinking, clock=Ticks())
    deltas: list[Delta] = []
    run_decode_loop(loop, model, deltas.extend)
    usage = Usage()
    loop.fill(usage)
    return deltas, usage, loop


def text_of(deltas: list[Delta]) -> str:
    return "".join(d.text for d in deltas if isinstance(d, TextDelta))


def thinking_of(deltas: list[Delta]) -> str:
    return "".join(d.text for d in deltas if isinstance(d, ThinkingDelta))


# --- markers split across tokens ---------------------------------------------------------------


def test_think_close_split_across_tokens() -> None:
    model = ScriptedModel(["Let", " me", " think", "</thi", "nk>", "Hello", " there", "."])
    deltas, usage, _ = run(model, start_in_thinking=True, reasoning=budget(100))
    assert thinking_of(deltas) == "Let me think"
    assert text_of(deltas) == "Hello there."
    assert (usage.thinking_tokens, usage.completion_tokens) == (5, 8)  # both halves of the marker
    assert usage.stop_reason == "stop" and model.bridges == []


def test_gemma4_channel_markers_split_across_tokens() -> None:
    model = ScriptedModel(["<|chan", "nel>thought", "\n", "plan", " it", "<chan", "nel|>", "Sure", "."])
    deltas, usage, _ = run(model, GEMMA4, reasoning=ON)
    assert thinking_of(deltas) == "plan it"
    assert text_of(deltas) == "Sure."
    assert usage.thinking_tokens == 6  # `<|chan` alone cannot be told from text yet
    assert model.bridges == []


@pytest.mark.parametrize("fmt", [CHATML, GEMMA4], ids=lambda f: f.name)
def test_thinking_never_reaches_text_wherever_the_tokens_split(fmt: ChatFormat) -> None:
    raw = f"{fmt.think_open}\nsecret plan{fmt.think_close}The answer is 4."
    for cut in range(1, len(raw)):
        for second in range(cut + 1, len(raw), 3):
            model = ScriptedModel([raw[:cut], raw[cut:second], raw[second:]])
            deltas, usage, _ = run(model, fmt, reasoning=budget(50))
            assert text_of(deltas) == "The answer is 4.", (cut, second)
            assert thinking_of(deltas) == "secret plan", (cut, second)
            assert usage.stop_reason == "stop"


def test_stop_string_split_across_tokens_ends_generation() -> None:
    model = ScriptedModel(["Hi", ".", "<|im_", "end|>", "never"])
    deltas, usage, _ = run(model, reasoning=OFF)
    assert text_of(deltas) == "Hi."
    assert usage.stop_reason == "stop" and usage.completion_tokens == 4


# --- the budget ------------------------------------------------------------------------------


def test_budget_runs_out_the_hub_closes_thinking_and_the_model_answers() -> None:
    model = ScriptedModel(endless(" hmm"), ["It", " is", " 4", "."])
    deltas, usage, loop = run(model, start_in_thinking=True, reasoning=budget(5))
    assert model.bridges == [CHATML.close_thinking] and CHATML.close_thinking.startswith("</think>")
    assert text_of(deltas) == "It is 4."
    assert thinking_of(deltas).split() == ["hmm"] * 5
    assert usage.thinking_tokens == 5 and usage.completion_tokens == 9
    assert usage.stop_reason == "budget" and loop.closed_by_hub == 1
    last_thinking = max(i for i, d in enumerate(deltas) if isinstance(d, ThinkingDelta))
    assert last_thinking < min(i for i, d in enumerate(deltas) if isinstance(d, TextDelta))


def test_gemma4_budget_bridge_is_its_own_close_marker() -> None:
    model = ScriptedModel(["<|channel>thought", "\n", "a", "b", "c", "d"], ["Done", "."])
    deltas, usage, _ = run(model, GEMMA4, reasoning=budget(3))
    assert model.bridges == ["<channel|>\n"]
    assert text_of(deltas) == "Done."
    assert "<" not in text_of(deltas) + thinking_of(deltas)
    assert usage.thinking_tokens == 3 and usage.stop_reason == "budget"


def test_budget_of_zero_closes_a_forced_block_at_the_first_token() -> None:
    model = ScriptedModel(endless("x"), ["Yes", "."])
    deltas, usage, _ = run(model, start_in_thinking=True, reasoning=budget(0))
    assert model.bridges == ["</think>\n"]
    assert text_of(deltas) == "Yes."
    assert usage.thinking_tokens == 1 and usage.stop_reason == "budget"


def test_budget_of_zero_closes_thinking_the_model_opens_itself() -> None:
    model = ScriptedModel(["<think>", "secret"], ["Yes", "."])
    deltas, usage, _ = run(model, reasoning=budget(0))
    assert model.bridges == ["</think>\n"]
    assert text_of(deltas) == "Yes." and thinking_of(deltas) == ""


def test_reasoning_off_allows_no_thinking() -> None:
    model = ScriptedModel(["<think>", "secret", "</think>"], ["Yes", "."])
    deltas, usage, _ = run(model, reasoning=OFF)
    assert model.bridges == ["</think>\n"] and "secret" not in text_of(deltas) + thinking_of(deltas)
    assert text_of(deltas) == "Yes."


def test_thinking_that_never_ends_under_reasoning_on_is_closed_at_max_tokens() -> None:
    model = ScriptedModel(endless(" more"), ["Answer", "."])
    deltas, usage, _ = run(model, start_in_thinking=True, reasoning=ON, max_tokens=8)
    assert model.bridges == ["</think>\n"]
    assert usage.thinking_tokens == 8 and text_of(deltas) == "Answer."
    assert usage.stop_reason == "budget"


def test_budget_reached_exactly_at_the_models_own_close_marker_needs_no_bridge() -> None:
    model = ScriptedModel(["a", "b", "</think>", "Hi", "."])
    deltas, usage, loop = run(model, start_in_thinking=True, reasoning=budget(3))
    assert model.bridges == [] and loop.closed_by_hub == 0
    assert thinking_of(deltas) == "ab" and text_of(deltas) == "Hi."
    assert usage.thinking_tokens == 3 and usage.stop_reason == "stop"


def test_budget_reached_one_token_before_the_close_marker_is_closed_by_the_hub() -> None:
    model = ScriptedModel(["a", "b", "c", "</think>", "never"], ["Hi", "."])
    deltas, usage, _ = run(model, start_in_thinking=True, reasoning=budget(3))
    assert model.bridges == ["</think>\n"] and text_of(deltas) == "Hi."
    assert thinking_of(deltas) == "abc" and "never" not in text_of(deltas)


def test_budget_running_out_inside_a_half_written_close_marker_keeps_it_out_of_the_text() -> None:
    model = ScriptedModel(["a", "</thi"], ["nk>", "Hi"])  # a confused model writes the rest
    deltas, usage, _ = run(model, start_in_thinking=True, reasoning=budget(2))
    assert model.bridges == ["</think>\n"]
    assert text_of(deltas) == "nk>Hi"  # the model's own words after the bridge
    assert "</thi" not in text_of(deltas) and "a" in thinking_of(deltas)


def test_a_model_reopening_thinking_forever_is_stopped_as_length() -> None:
    def reopen() -> Iterator[str]:
        yield from itertools.cycle(["<think>", "again"])
    model = ScriptedModel(reopen, *[reopen] * 100)
    deltas, usage, _ = run(model, reasoning=budget(4), max_tokens=10)
    assert usage.stop_reason == "length"
    assert usage.completion_tokens <= 4 + 10
    assert "again" not in text_of(deltas)


def test_answer_cut_at_max_tokens_after_a_budget_close_reports_length() -> None:
    model = ScriptedModel(endless("t"), endless(" word"))
    deltas, usage, _ = run(model, start_in_thinking=True, reasoning=budget(2), max_tokens=5)
    assert usage.stop_reason == "length"
    assert usage.completion_tokens - usage.thinking_tokens == 5 and text_of(deltas) == " word" * 5


# --- what is reported ----------------------------------------------------------------------------


def test_thinking_time_counts_the_gaps_between_thinking_tokens() -> None:
    model = ScriptedModel(["a", "b", "c", "</think>", "x", "y"])
    _, usage, _ = run(model, start_in_thinking=True, reasoning=budget(10))
    assert usage.thinking_tokens == 4
    assert usage.thinking_s == pytest.approx(3.0)  # one tick between each of the four


def test_tool_call_after_thinking_is_reported_as_tool_call() -> None:
    model = ScriptedModel(["plan", "</think>", '<tool_call>{"name": "turn_on", ', '"arguments": {}}</tool_call>'])
    deltas, usage, _ = run(model, start_in_thinking=True, reasoning=budget(10))
    assert [d.call.name for d in deltas if isinstance(d, ToolCallDelta)] == ["turn_on"]
    assert usage.stop_reason == "tool_call"


def test_unclosed_call_at_the_end_is_malformed() -> None:
    model = ScriptedModel(['<tool_call>{"name": "turn_on"'])
    deltas, usage, _ = run(model, reasoning=OFF)
    assert any(isinstance(d, MalformedToolCall) for d in deltas) and usage.stop_reason == "stop"


def test_full_context_ends_the_output_as_length() -> None:
    def fills_up(bridge: str) -> Iterator[str]:
        yield from ["Once", " upon"]
        raise OutOfContext

    loop = DecodeLoop.for_format(CHATML, OFF, 64)
    deltas: list[Delta] = []
    run_decode_loop(loop, fills_up, deltas.extend)
    assert text_of(deltas) == "Once upon" and loop.stop_reason == "length"


def test_a_source_that_yields_nothing_ends_cleanly() -> None:
    deltas, usage, _ = run(ScriptedModel([]), reasoning=ON)
    assert deltas == [] and usage.completion_tokens == 0 and usage.stop_reason == "stop"


def test_source_is_closed_before_it_is_resumed() -> None:
    closed: list[int] = []

    def source(bridge: str) -> Iterator[str]:
        try:
            yield from (["Hi"] if bridge else itertools.repeat("think"))
        finally:
            closed.append(len(bridge))

    loop = DecodeLoop.for_format(CHATML, budget(2), 16, start_in_thinking=True)
    run_decode_loop(loop, source, lambda deltas: None)
    assert closed == [0, len(CHATML.close_thinking)]


@pytest.mark.parametrize("reasoning, expected", [(budget(7), 7), (budget(-3), 0), (ON, 32), (OFF, 0)])
def test_thinking_allowance(reasoning: Reasoning, expected: int) -> None:
    assert thinking_allowance(reasoning, 32) == expected
