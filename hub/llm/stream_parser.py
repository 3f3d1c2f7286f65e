"""Turn a model's raw streamed text into text, thinking and tool-call deltas.

Recognised, in any mix and split across chunks at any position:
- Gemma 4 calls `<|tool_call>call:NAME{…}<tool_call|>` and Hermes/Qwen JSON calls
  `<tool_call>{"name": …, "arguments": {…}}</tool_call>` (bodies: `tool_call_syntax`);
- thinking in Gemma 4 `<|channel>thought…<channel|>` or `<think>…</think>`; either close
  marker ends either kind of block. Leading whitespace of a thinking block is dropped (Gemma
  writes `thought\\n`).

Choices for odd input (nothing ever raises):
- a call ends at its first close marker (both are special tokens, so models do not write them
  inside string values); a call that is not closed before the stream ends, or before the next
  call opens, becomes a `MalformedToolCall` with everything it wrote as `raw`;
- stray close markers (`<channel|>`, `</think>`, `<tool_call|>`, `</tool_call>`) in text, and a
  `<|channel>` that does not open a thought channel, are dropped: they are format tokens, never
  words to show or speak (llama.cpp drops them the same way). Open markers inside thinking are
  dropped too.

Only a suffix that could still become a marker is held back between chunks: every marker starts
with `<` and holds no other `<`, so at most the text from the last `<` waits.
"""

from __future__ import annotations

from enum import Enum

from hub.llm.tool_call_syntax import ToolCallSyntaxError, parse_gemma_call, parse_json_call
from hub.core.messages import ToolCall
from hub.llm.types import Delta, MalformedToolCall, TextDelta, ThinkingDelta, ToolCallDelta

GEMMA_CALL_OPEN = "<|tool_call>"
GEMMA_CALL_CLOSE = "<tool_call|>"
JSON_CALL_OPEN = "<tool_call>"
JSON_CALL_CLOSE = "</tool_call>"
CHANNEL_OPEN = "<|channel>"
GEMMA_THOUGHT_OPEN = "<|channel>thought"
CHANNEL_CLOSE = "<channel|>"
THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"


class _Mode(Enum):
    TEXT = "text"
    THINKING = "thinking"
    GEMMA_CALL = "gemma_call"
    JSON_CALL = "json_call"


class _Action(Enum):
    OPEN_THINKING = "open_thinking"
    CLOSE_THINKING = "close_thinking"
    OPEN_GEMMA_CALL = "open_gemma_call"
    OPEN_JSON_CALL = "open_json_call"
    CLOSE_CALL = "close_call"
    DROP = "drop"


_MARKERS: dict[_Mode, dict[str, _Action]] = {
    _Mode.TEXT: {
        GEMMA_THOUGHT_OPEN: _Action.OPEN_THINKING,
        THINK_OPEN: _Action.OPEN_THINKING,
        GEMMA_CALL_OPEN: _Action.OPEN_GEMMA_CALL,
        JSON_CALL_OPEN: _Action.OPEN_JSON_CALL,
        CHANNEL_OPEN: _Action.DROP,
        CHANNEL_CLOSE: _Action.DROP,
        THINK_CLOSE: _Action.DROP,
        GEMMA_CALL_CLOSE: _Action.DROP,
        JSON_CALL_CLOSE: _Action.DROP,
    },
    _Mode.THINKING: {
        CHANNEL_CLOSE: _Action.CLOSE_THINKING,
        THINK_CLOSE: _Action.CLOSE_THINKING,
        GEMMA_THOUGHT_OPEN: _Action.DROP,
        CHANNEL_OPEN: _Action.DROP,
        THINK_OPEN: _Action.DROP,
    },
    _Mode.GEMMA_CALL: {
        GEMMA_CALL_CLOSE: _Action.CLOSE_CALL,
        GEMMA_CALL_OPEN: _Action.OPEN_GEMMA_CALL,
        JSON_CALL_OPEN: _Action.OPEN_JSON_CALL,
    },
    _Mode.JSON_CALL: {
        JSON_CALL_CLOSE: _Action.CLOSE_CALL,
        GEMMA_CALL_OPEN: _Action.OPEN_GEMMA_CALL,
        JSON_CALL_OPEN: _Action.OPEN_JSON_CALL,
    },
}

_CLOSE_OF = {_Mode.GEMMA_CALL: GEMMA_CALL_CLOSE, _Mode.JSON_CALL: JSON_CALL_CLOSE}


class StreamParser:
    """Feed raw model text chunk by chunk; get deltas as soon as they are certain.

    `start_in_thinking=True` when the prompt already opened a thinking block: the output
    is thinking until a close marker. Consecutive text (or thinking) deltas of one call to
    `feed` are merged; order is always kept. Tool calls get ids `call_1`, `call_2`, … per parser.
    """

    def __init__(self, start_in_thinking: bool = False) -> None:
        self._mode = _Mode.THINKING if start_in_thinking else _Mode.TEXT
        self._skip_thinking_space = start_in_thinking
        self._pending = ""  # unprocessed text: at most a possible marker prefix between calls
        self._call_raw: list[str] = []  # what the current call wrote, open marker included
        self._call_count = 0
        self._out: list[Delta] = []

    @property
    def in_thinking(self) -> bool:
        return self._mode is _Mode.THINKING

    def feed(self, text: str) -> list[Delta]:
        self._pending += text
        self._scan(final=False)
        return self._take_output()

    def finish(self) -> list[Delta]:
        """End of the stream: release held text and report an unclosed call as malformed."""
        self._scan(final=True)
        if self._mode in _CLOSE_OF:
            self._malformed(f"tool call not closed: the output ended before {_CLOSE_OF[self._mode]}")
        self._mode = _Mode.TEXT
        return self._take_output()

    # --- scanning --------------------------------------------------------------------------

    def _scan(self, final: bool) -> None:
        buffer = self._pending
        consumed = 0  # buffer[:consumed] has been handed on
        search = 0
        while True:
            at = buffer.find("<", search)
            if at < 0:
                break
            marker, partial = _marker_at(buffer, at, _MARKERS[self._mode])
            if partial and not final:
                self._content(buffer[consumed:at])
                self._pending = buffer[at:]
                return
            if marker is None:
                search = at + 1
                continue
            self._content(buffer[consumed:at])
            consumed = search = at + len(marker)
            self._act(_MARKERS[self._mode][marker], marker)
        self._content(buffer[consumed:])
        self._pending = ""

    def _content(self, text: str) -> None:
        if not text:
            return
        if self._mode is _Mode.TEXT:
            self._emit(TextDelta(text))
        elif self._mode is _Mode.THINKING:
            if self._skip_thinking_space:
                text = text.lstrip()
                if not text:
                    return
                self._skip_thinking_space = False
            self._emit(ThinkingDelta(text))
        else:
            self._call_raw.append(text)

    def _act(self, action: _Action, marker: str) -> None:
        if action is _Action.DROP:
            return
        if action is _Action.OPEN_THINKING:
            self._mode = _Mode.THINKING
            self._skip_thinking_space = True
        elif action is _Action.CLOSE_THINKING:
            self._mode = _Mode.TEXT
        elif action in (_Action.OPEN_GEMMA_CALL, _Action.OPEN_JSON_CALL):
            if self._mode in _CLOSE_OF:
                self._malformed(f"tool call not closed with {_CLOSE_OF[self._mode]} before the next call")
            self._mode = _Mode.GEMMA_CALL if action is _Action.OPEN_GEMMA_CALL else _Mode.JSON_CALL
            self._call_raw = [marker]
        elif action is _Action.CLOSE_CALL:
            self._close_call(marker)

    def _close_call(self, close_marker: str) -> None:
        body = "".join(self._call_raw[1:])
        raw = "".join(self._call_raw) + close_marker
        try:
            if self._mode is _Mode.GEMMA_CALL:
                calls = [parse_gemma_call(body)]
            else:
                calls = parse_json_call(body)
        except ToolCallSyntaxError as error:
            self._emit(MalformedToolCall(raw=raw, error=str(error)))
        else:
            for name, arguments in calls:
                self._call_count += 1
                self._emit(ToolCallDelta(ToolCall(name, arguments, f"call_{self._call_count}")))
        self._call_raw = []
        self._mode = _Mode.TEXT

    def _malformed(self, error: str) -> None:
        self._emit(MalformedToolCall(raw="".join(self._call_raw), error=error))
        self._call_raw = []

    def _emit(self, delta: Delta) -> None:
        last = self._out[-1] if self._out else None
        if isinstance(delta, TextDelta) and isinstance(last, TextDelta):
            self._out[-1] = TextDelta(last.text + delta.text)
        elif isinstance(delta, ThinkingDelta) and isinstance(last, ThinkingDelta):
            self._out[-1] = ThinkingDelta(last.text + delta.text)
        else:
            self._out.append(delta)

    def _take_output(self) -> list[Delta]:
        out, self._out = self._out, []
        return out


def _marker_at(buffer: str, at: int, markers: dict[str, _Action]) -> tuple[str | None, bool]:
    """The longest marker starting at `at`, and whether a longer one may still be arriving."""
    rest = len(buffer) - at
    found: str | None = None
    partial = False
    for marker in markers:
        if rest < len(marker):
            if marker.startswith(buffer[at:]):
                partial = True
        elif buffer.startswith(marker, at) and (found is None or len(marker) > len(found)):
            found = marker
    return found, partial
