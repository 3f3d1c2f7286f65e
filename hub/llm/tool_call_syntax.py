"""Decode tool-call bodies: Gemma 4 `call:NAME{key:<|"|>text<|"|>,n:5,…}` and Hermes JSON.

The Gemma 4 format (llama.cpp `models/templates/gemma4.jinja`, `format_argument` with bare keys):
strings are wrapped in `<|"|>` and are literal (no escapes, may hold any other character);
keys are bare; numbers, `true`, `false`, `null`, nested `{…}` and `[…]` are as in JSON.
Whitespace around separators is allowed. To read what models write in practice we also accept
keys quoted with `<|"|>` or `"` and JSON strings (with escapes), and a trailing comma.
"""

from __future__ import annotations

import json
import re
from typing import Any

QUOTE = '<|"|>'
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*\Z")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_WORD = re.compile(r"[^\s,:{}\[\]]+")
_LITERALS: dict[str, Any] = {"true": True, "false": False, "null": None}
_BARE_KEY_STOP = frozenset(",{}[]\n")
_MAX_DEPTH = 64
_JSON = json.JSONDecoder()


class ToolCallSyntaxError(ValueError):
    """A call body that cannot be read; the message says where and why."""


def parse_gemma_call(body: str) -> tuple[str, dict[str, Any]]:
    """`call:NAME{…}` (the `call:` prefix may be missing) → (NAME, arguments)."""
    text = body.strip()
    if text.startswith("call:"):
        text = text[len("call:") :]
    brace = text.find("{")
    if brace < 0:
        raise ToolCallSyntaxError(f"no '{{' after the tool name in {_snippet(text, 0)}")
    name = text[:brace].strip()
    if not _NAME.match(name):
        raise ToolCallSyntaxError(f"invalid tool name {name!r}")
    reader = _Reader(text, brace)
    arguments = reader.read_dict(depth=0)
    reader.skip_ws()
    if reader.pos != len(text):
        raise ToolCallSyntaxError(
            f"unexpected text after the arguments at offset {reader.pos}: {_snippet(text, reader.pos)}"
        )
    return name, arguments


def _snippet(text: str, pos: int) -> str:
    part = text[pos : pos + 24]
    return repr(part + ("…" if len(text) > pos + 24 else "")) if part else "end of call"


class _Reader:
    """Recursive-descent reader over one call body; `pos` is the next unread index."""

    def __init__(self, text: str, pos: int) -> None:
        self.text = text
        self.pos = pos

    def fail(self, what: str) -> ToolCallSyntaxError:
        return ToolCallSyntaxError(f"{what} at offset {self.pos}: {_snippet(self.text, self.pos)}")

    def skip_ws(self) -> None:
        text, pos = self.text, self.pos
        while pos < len(text) and text[pos].isspace():
            pos += 1
        self.pos = pos

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def expect(self, char: str) -> None:
        if self.peek() != char:
            raise self.fail(f"expected {char!r}")
        self.pos += 1

    def read_value(self, depth: int) -> Any:
        self.skip_ws()
        text, pos = self.text, self.pos
        if text.startswith(QUOTE, pos):
            return self.read_gemma_string()
        char = self.peek()
        if char == '"':
            return self.read_json_string()
        if char == "{":
            return self.read_dict(depth + 1)
        if char == "[":
            return self.read_list(depth + 1)
        number = _NUMBER.match(text, pos)
        word = _WORD.match(text, pos)
        if number and (not word or word.end() == number.end()):
            self.pos = number.end()
            literal = number.group()
            return float(literal) if any(c in literal for c in ".eE") else int(literal)
        if word and word.group() in _LITERALS:
            self.pos = word.end()
            return _LITERALS[word.group()]
        if word:
            raise self.fail(f"unquoted value {word.group()!r} (strings must be wrapped in {QUOTE})")
        raise self.fail("expected a value")

    def read_gemma_string(self) -> str:
        start = self.pos + len(QUOTE)
        end = self.text.find(QUOTE, start)
        if end < 0:
            raise self.fail(f"string not closed with {QUOTE}")
        self.pos = end + len(QUOTE)
        return self.text[start:end]

    def read_json_string(self) -> str:
        try:
            value: str
            value, self.pos = _JSON.raw_decode(self.text, self.pos)  # at a '"': a JSON string
        except ValueError as error:
            raise self.fail(f"invalid quoted string ({error})") from None
        return value

    def read_key(self) -> str:
        self.skip_ws()
        if self.text.startswith(QUOTE, self.pos):
            return self.read_gemma_string()
        if self.peek() == '"':
            return self.read_json_string()
        text, start = self.text, self.pos
        end = start
        while end < len(text) and text[end] != ":":
            if text[end] in _BARE_KEY_STOP:
                break
            end += 1
        key = text[start:end].strip()
        if end >= len(text) or text[end] != ":" or not key:
            self.pos = end
            raise self.fail("expected 'key:'")
        self.pos = end
        return key

    def read_dict(self, depth: int) -> dict[str, Any]:
        if depth > _MAX_DEPTH:
            raise self.fail("arguments nested too deeply")
        self.expect("{")
        result: dict[str, Any] = {}
        while True:
            self.skip_ws()
            if self.peek() == "}":
                self.pos += 1
                return result
            key = self.read_key()
            self.skip_ws()
            self.expect(":")
            result[key] = self.read_value(depth)
            self.skip_ws()
            if self.peek() == ",":
                self.pos += 1
            elif self.peek() != "}":
                raise self.fail("expected ',' or '}'")

    def read_list(self, depth: int) -> list[Any]:
        if depth > _MAX_DEPTH:
            raise self.fail("arguments nested too deeply")
        self.expect("[")
        result: list[Any] = []
        while True:
            self.skip_ws()
            if self.peek() == "]":
                self.pos += 1
                return result
            result.append(self.read_value(depth))
            self.skip_ws()
            if self.peek() == ",":
                self.pos += 1
            elif self.peek() != "]":
                raise self.fail("expected ',' or ']'")


def parse_json_call(body: str) -> list[tuple[str, dict[str, Any]]]:
    """Hermes/Qwen `{"name": …, "arguments": {…}}` (or a list of them) → [(name, arguments)].

    Accepts "parameters" for "arguments", arguments given as a JSON string, and the OpenAI
    wrapper `{"type": "function", "function": {…}}`.
    """
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as error:
        raise ToolCallSyntaxError(f"invalid JSON in tool call: {error}") from None
    items = data if isinstance(data, list) else [data]
    if not items:
        raise ToolCallSyntaxError("empty list of tool calls")
    return [_json_item(item) for item in items]


def _json_item(item: Any) -> tuple[str, dict[str, Any]]:
    if not isinstance(item, dict):
        raise ToolCallSyntaxError(f"tool call must be a JSON object, not {type(item).__name__}")
    if "name" not in item and isinstance(item.get("function"), dict):
        item = item["function"]
    name = item.get("name")
    if not isinstance(name, str) or not _NAME.match(name.strip()):
        raise ToolCallSyntaxError(f"tool call has no valid \"name\" (got {name!r})")
    arguments = item.get("arguments", item.get("parameters"))
    if arguments is None:
        arguments = {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError) as error:
            raise ToolCallSyntaxError(f"\"arguments\" is a string that is not JSON: {error}") from None
    if not isinstance(arguments, dict):
        raise ToolCallSyntaxError(f"\"arguments\" must be an object, not {type(arguments).__name__}")
    return name.strip(), arguments
