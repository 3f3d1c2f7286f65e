"""One model round streamed into the reply: its text, its calls and why it stopped.

Text that starts like JSON is held back: a call written without its format's markers
(`{"name": …, "arguments": …}` naming an offered tool) is read as the call it is. A round that
starts repeating itself, or whose reply is capped, is halted there.
"""

from __future__ import annotations

import logging
from typing import Sequence

from hub.agent.reply import ReplyBuilder
from hub.agent.turn import TurnState
from hub.agent.utterances import repeats_itself
from hub.core.messages import ToolCall
from hub.llm.tool_call_syntax import ToolCallSyntaxError, parse_json_call
from hub.llm.types import Done, Engine, GenerationRequest, MalformedToolCall, TextDelta, ThinkingDelta, ToolCallDelta

_LOGGER = logging.getLogger(__name__)


async def generate(
    engine: Engine, generation: GenerationRequest, state: TurnState, reply: ReplyBuilder, allowed: Sequence[str],
) -> tuple[str, list[ToolCall], str]:
    """Stream one model round into the reply; the raw text, the calls and the stop reason.

    Text that starts like JSON is held back: a call written without its format's markers
    (`{"name": …, "arguments": …}` naming an offered tool) is read as the call it is. A round
    that starts repeating itself, or whose reply is capped, is halted there, and its Done still
    read: its tokens count in the turn's usage.
    """
    raw: list[str] = []
    calls: list[ToolCall] = []
    stop_reason = "stop"
    held = False
    stream = engine.stream(generation)
    try:
        async for delta in stream:
            if isinstance(delta, TextDelta):
                raw.append(delta.text)
                text = "".join(raw)
                held = held or (not reply.text and text.lstrip()[:1] in ("{", "["))
                if not held:
                    reply.add_text(delta.text)
                if repeats_itself(text[-400:]):
                    _LOGGER.info("the model repeats itself in %s: reply ended", state.conversation.id)
                    reply.stop()
                if reply.capped:
                    generation.halt.set()
            elif isinstance(delta, ToolCallDelta):
                calls.append(delta.call)
            elif isinstance(delta, MalformedToolCall):
                calls.append(ToolCall("invalid_tool_call", {"raw": delta.raw[:300], "error": delta.error},
                                      id=f"bad_{len(calls) + 1}"))
            elif isinstance(delta, ThinkingDelta):
                _LOGGER.debug("thinking: %s", delta.text)
            elif isinstance(delta, Done):
                state.timings.add_usage(delta.usage)
                stop_reason = delta.usage.stop_reason
    finally:
        await stream.aclose()
    text = "".join(raw)
    if held:
        written = _calls_written_as_text(text, allowed)
        if written:
            return "", [*calls, *written], stop_reason
        reply.add_text(text)  # not a call: the sentence filter keeps JSON from being spoken
    return text, calls, stop_reason


def _calls_written_as_text(text: str, allowed: Sequence[str]) -> list[ToolCall]:
    """`{"name": …, "arguments": …}` (or a list of them) written as plain text, when every name
    is a tool on offer; [] for anything else."""
    try:
        parsed = parse_json_call(text.strip().rstrip("."))
    except ToolCallSyntaxError:
        return []
    if not all(name in allowed for name, _ in parsed):
        return []
    return [ToolCall(name, arguments, id=f"text_{n + 1}") for n, (name, arguments) in enumerate(parsed)]
