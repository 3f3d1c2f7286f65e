"""The decode loop between sampled tokens and typed deltas: stop strings, thinking and its budget.

Independent of any model: a `TokenSource` yields the text of each sampled token (the engine's
comes from llama.cpp, a test's from a script) and `run_decode_loop` drives it through a
`DecodeLoop`, which
- cuts the output at the format's stop strings (turn markers), holding back a possible prefix;
- splits text, thinking and tool calls with the `StreamParser`;
- counts thinking tokens (and the time between them) and, when the thinking allowance is used
  up with the block still open, tells the caller to close it: the format's end-of-thinking
  marker and a short bridge are appended to the model's input and sampling resumes from there,
  so the model goes on to answer instead of being cut off mid-thought.

Thinking allowance per reasoning mode: `budget` → its token count; `on` → `max_tokens` (a model
that never closes its thinking still answers); `off` → 0 (a model that thinks anyway is closed
at once). The answer gets `max_tokens` of its own; a model that keeps re-opening thinking is
stopped at allowance + max_tokens generated tokens in all.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import Enum
from typing import Callable, Iterable, Sequence

from hub.llm.chat_format import ChatFormat
from hub.llm.stream_parser import StreamParser
from hub.llm.types import Delta, Reasoning, ReasoningMode, ToolCallDelta, Usage


class StopMatcher:
    """Cuts the text at the first stop string; holds back a tail that may become one."""

    def __init__(self, stops: Sequence[str]) -> None:
        self._stops = [s for s in stops if s]
        self._held = ""

    def feed(self, text: str) -> tuple[str, bool]:
        buffer = self._held + text
        hits = [i for i in (buffer.find(s) for s in self._stops) if i >= 0]
        if hits:
            self._held = ""
            return buffer[: min(hits)], True
        keep = 0
        for stop in self._stops:
            for size in range(min(len(stop) - 1, len(buffer)), keep, -1):
                if buffer.endswith(stop[:size]):
                    keep = size
                    break
        self._held = buffer[len(buffer) - keep :] if keep else ""
        return buffer[: len(buffer) - keep], False

    def flush(self) -> str:
        held, self._held = self._held, ""
        return held


class Action(Enum):
    CONTINUE = "continue"
    STOP = "stop"  # a stop string or the token limit: sample no more
    CLOSE_THINKING = "close_thinking"  # append `Step.bridge` to the model's input, then resume


@dataclass(frozen=True)
class Step:
    """What one token produced, and what the caller must do next."""

    deltas: list[Delta]
    action: Action = Action.CONTINUE
    bridge: str = ""  # with CLOSE_THINKING: the text to append (end-of-thinking marker + bridge)


class OutOfContext(Exception):
    """Raised by a token source when the context window is full (the output ends as `length`)."""


def thinking_allowance(reasoning: Reasoning, max_tokens: int) -> int:
    if reasoning.mode is ReasoningMode.BUDGET:
        return max(0, reasoning.budget)
    if reasoning.mode is ReasoningMode.ON:
        return max_tokens
    return 0


@dataclass
class DecodeLoop:
    """Feed it each token's text; it returns the deltas to emit and what to do next.

    `think_close` is what the parser sees when the hub closes thinking (the marker only);
    `close_thinking` is what the model gets (marker + bridge, see `ChatFormat.close_thinking`).
    """

    stop: Sequence[str]
    think_close: str
    close_thinking: str
    reasoning: Reasoning
    max_tokens: int
    start_in_thinking: bool = False
    clock: Callable[[], float] = time.perf_counter
    allowance: int = field(default=0, init=False)  # thinking tokens before the hub closes the block
    thinking_tokens: int = field(default=0, init=False)
    answer_tokens: int = field(default=0, init=False)
    thinking_s: float = field(default=0.0, init=False)
    closed_by_hub: int = field(default=0, init=False)  # how often the hub closed a thinking block
    _reason: str = field(default="length", init=False)
    _called_tool: bool = field(default=False, init=False)
    _last: float | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self._parser = StreamParser(start_in_thinking=self.start_in_thinking)
        self._stops = StopMatcher(self.stop)
        self.allowance = thinking_allowance(self.reasoning, self.max_tokens)

    @classmethod
    def for_format(cls, fmt: ChatFormat, reasoning: Reasoning, max_tokens: int, *,
                   start_in_thinking: bool = False, clock: Callable[[], float] = time.perf_counter) -> "DecodeLoop":
        """A loop with `fmt`'s stop strings and thinking markers."""
        return cls(fmt.stop, fmt.think_close, fmt.close_thinking, reasoning, max_tokens,
                   start_in_thinking=start_in_thinking, clock=clock)

    @property
    def stop_reason(self) -> str:
        """stop | length | tool_call | budget: `budget` when the hub closed thinking and the answer
        then ended by itself; `length` whenever the output was cut."""
        if self._reason == "stop" and self._called_tool:
            return "tool_call"
        if self._reason == "stop" and self.closed_by_hub:
            return "budget"
        return self._reason

    def feed(self, text: str) -> Step:
        now = self.clock()
        was_thinking = self._parser.in_thinking
        kept, hit_stop = self._stops.feed(text)
        deltas = self._parser.feed(kept) if kept else []
        if was_thinking or self._parser.in_thinking:
            self.thinking_tokens += 1
            self.thinking_s += now - self._last if self._last is not None else 0.0
        else:
            self.answer_tokens += 1
        self._last = now
        if hit_stop:
            self._reason = "stop"
            return self._step(deltas, Action.STOP)
        if self.answer_tokens >= self.max_tokens or self.thinking_tokens + self.answer_tokens >= (
            self.allowance + self.max_tokens
        ):
            return self._step(deltas, Action.STOP)
        if self._parser.in_thinking and self.thinking_tokens >= self.allowance:
            deltas += self._parser.feed(self._stops.flush()) + self._parser.feed(self.think_close)
            self.closed_by_hub += 1
            return self._step(deltas, Action.CLOSE_THINKING, self.close_thinking)
        return self._step(deltas, Action.CONTINUE)

    def end_of_turn(self) -> None:
        """The model ended its turn by itself."""
        self._reason = "stop"

    def out_of_context(self) -> None:
        self._reason = "length"

    def finish(self) -> list[Delta]:
        """Release held text; report a call left open as malformed."""
        deltas = self._parser.feed(self._stops.flush()) + self._parser.finish()
        self._called_tool = self._called_tool or any(isinstance(d, ToolCallDelta) for d in deltas)
        return deltas

    def fill(self, usage: Usage) -> None:
        usage.thinking_tokens = self.thinking_tokens
        usage.thinking_s = self.thinking_s
        usage.completion_tokens = self.thinking_tokens + self.answer_tokens
        usage.stop_reason = self.stop_reason

    def _step(self, deltas: list[Delta], action: Action, bridge: str = "") -> Step:
        self._called_tool = self._called_tool or any(isinstance(d, ToolCallDelta) for d in deltas)
        return Step(deltas, action, bridge)


TokenSource = Callable[[str], Iterable[str]]
"""Called with "" to start sampling, and with the bridge text to append each time the hub closes
thinking; yields the text of each sampled token until the model ends its turn. Raises
`OutOfContext` when the context window is full."""


def run_decode_loop(loop: DecodeLoop, source: TokenSource, emit: Callable[[list[Delta]], None]) -> None:
    """Drive `source` through `loop` until the model stops or a limit is reached."""
    bridge = ""
    try:
        while True:
            step = None
            texts = iter(source(bridge))
            try:
                for text in texts:
                    step = loop.feed(text)
                    emit(step.deltas)
                    if step.action is not Action.CONTINUE:
                        break
            finally:  # a generator source must let go of the model before it is resumed
                getattr(texts, "close", lambda: None)()
            if step is None or step.action is Action.CONTINUE:
                loop.end_of_turn()
                break
            if step.action is Action.STOP:
                break
            bridge = step.bridge
    except OutOfContext:
        loop.out_of_context()
    emit(loop.finish())
