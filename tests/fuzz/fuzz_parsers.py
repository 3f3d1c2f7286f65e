"""Atheris fuzz targets for the parsers that read what others send: the model's tool-call
stream (`StreamParser`) and MQTT asks (`parse_ask`).

Run one: `python tests/fuzz/fuzz_parsers.py stream_parser -runs=20000` (exit 0: nothing found).
"""

from __future__ import annotations

import json
import sys

import atheris

with atheris.instrument_imports(include=["hub"]):
    from hub.agent.types import MAX_REQUEST_CHARS
    from hub.interfaces.mqtt.api import AskError, parse_ask
    from hub.llm.stream_parser import StreamParser
    from hub.llm.types import MalformedToolCall, TextDelta, ThinkingDelta, ToolCallDelta

MARKERS = ["<|tool_call>", "<tool_call|>", "<tool_call>", "</tool_call>", "<|channel>", "<|channel>thought",
           "<channel|>", "<think>", "</think>", "call:", "{", "}", '"', "<|\"|>", "\n"]


def _parsed(chunks: list[str]) -> list[tuple[str, str]]:
    """The deltas as (kind, content), runs of text/thinking merged (chunking may split them)."""
    parser = StreamParser()
    deltas = [d for chunk in chunks for d in parser.feed(chunk)] + parser.finish()
    out: list[tuple[str, str]] = []
    for delta in deltas:
        if isinstance(delta, (TextDelta, ThinkingDelta)):
            kind = type(delta).__name__
            if out and out[-1][0] == kind:
                out[-1] = (kind, out[-1][1] + delta.text)
            elif delta.text:
                out.append((kind, delta.text))
        elif isinstance(delta, ToolCallDelta):
            out.append(("call", f"{delta.call.name}{sorted(delta.call.arguments.items())!r}"))
        elif isinstance(delta, MalformedToolCall):
            out.append(("malformed", delta.raw))
        else:
            raise AssertionError(f"unexpected delta {delta!r}")
    return out


def stream_parser(data: bytes) -> None:
    """Any text, cut anywhere: no exception, and the same deltas as the text in one piece."""
    fdp = atheris.FuzzedDataProvider(data)
    pieces = []
    while fdp.remaining_bytes():
        if fdp.ConsumeBool():
            pieces.append(MARKERS[fdp.ConsumeIntInRange(0, len(MARKERS) - 1)])
        else:
            pieces.append(fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 12)))
    whole = "".join(pieces)
    assert _parsed(pieces) == _parsed([whole]), (pieces, whole)


def _ask_payload(fdp: atheris.FuzzedDataProvider) -> bytes:
    """Raw bytes half the time, else a JSON object of fuzzed values under the ask's keys."""
    if fdp.ConsumeBool():
        return fdp.ConsumeBytes(fdp.remaining_bytes())
    values = [None, True, 0, -1, 2**70, 1.5, "", " ", [], {}]
    body = {}
    for key in ("text", "id", "conversation_id", "language", "conversational", "reasoning", "budget"):
        choice = fdp.ConsumeIntInRange(0, len(values) + 1)
        if choice < len(values):
            body[key] = values[choice]
        elif choice == len(values):
            body[key] = fdp.ConsumeUnicode(fdp.ConsumeIntInRange(0, 300))
    return json.dumps(body).encode("utf-8", "surrogatepass")


def mqtt_ask(data: bytes) -> None:
    """Any payload: an Ask with usable text, or an AskError (a clear reply), nothing else."""
    try:
        ask = parse_ask(_ask_payload(atheris.FuzzedDataProvider(data)))
    except AskError as err:
        assert str(err)
        return
    assert ask.text and ask.text == ask.text.strip() and len(ask.text) <= MAX_REQUEST_CHARS


TARGETS = {"stream_parser": stream_parser, "mqtt_ask": mqtt_ask}

if __name__ == "__main__":
    target = TARGETS[sys.argv.pop(1)]
    atheris.Setup(sys.argv, target)
    atheris.Fuzz()
