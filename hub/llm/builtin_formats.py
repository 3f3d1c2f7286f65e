"""The built-in chat formats, for a GGUF without a template of its own: ChatML, Gemma 2/3, Gemma 4."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from hub.llm.chat_format import (
    GEMMA4_THINK_CLOSE,
    GEMMA4_THINK_OPEN,
    TEXT_TOOL_CALL_OPEN,
    TEXT_TOOL_RESPONSE_OPEN,
    Capabilities,
    ChatFormat,
)
from hub.llm.text_tools import text_tool_turns, tool_result_value
from hub.core.messages import Message, ToolCall, ToolSpec


@dataclass(frozen=True)
class ChatMLFormat(ChatFormat):
    """`<|im_start|>role\\n…<|im_end|>`: the default for architectures without a known format."""

    name: str = "chatml"
    stop: tuple[str, ...] = ("<|im_end|>", "<|im_start|>", TEXT_TOOL_RESPONSE_OPEN)
    constrained_call_prefix: str = TEXT_TOOL_CALL_OPEN

    def _render(self, messages: list[Message], tools: list[ToolSpec], thinking: bool,
                conversational: bool, add_generation_prompt: bool) -> str:
        out = [f"<|im_start|>{t.role}\n{t.content}<|im_end|>\n" for t in text_tool_turns(messages, tools)]
        if add_generation_prompt:
            out.append("<|im_start|>assistant\n")
        return "".join(out)


@dataclass(frozen=True)
class Gemma3Format(ChatFormat):
    """Gemma 2/3 turns: system text folded into the first user turn, roles alternate."""

    name: str = "gemma3"
    stop: tuple[str, ...] = ("<end_of_turn>", "<start_of_turn>", TEXT_TOOL_RESPONSE_OPEN)
    capabilities: Capabilities = field(default_factory=lambda: Capabilities(False, False, None, False))
    constrained_call_prefix: str = TEXT_TOOL_CALL_OPEN

    def _render(self, messages: list[Message], tools: list[ToolSpec], thinking: bool,
                conversational: bool, add_generation_prompt: bool) -> str:
        out = []
        for turn in text_tool_turns(messages, tools, system_role=False):
            role = "model" if turn.role == "assistant" else "user"
            out.append(f"<start_of_turn>{role}\n{turn.content}<end_of_turn>\n")
        if add_generation_prompt:
            out.append("<start_of_turn>model\n")
        return "".join(out)


_G4_QUOTE = '<|"|>'


def _g4_value(value: Any, escape_keys: bool = True) -> str:
    """A value in Gemma 4's declaration/call syntax (strings quoted with <|"|>, keys sorted)."""
    if isinstance(value, str):
        return _G4_QUOTE + value + _G4_QUOTE
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, Mapping):
        items = []
        for key in sorted(value):
            shown = _G4_QUOTE + key + _G4_QUOTE if escape_keys else key
            items.append(f"{shown}:{_g4_value(value[key], escape_keys)}")
        return "{" + ",".join(items) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_g4_value(v, escape_keys) for v in value) + "]"
    return str(value)


def _g4_type(schema: Mapping[str, Any]) -> str:
    kind = schema.get("type", "string")
    if not isinstance(kind, str):
        kind = next(iter(kind), "string")
    return str(kind).upper()


def _g4_properties(properties: Mapping[str, Any]) -> str:
    entries = []
    for key in sorted(properties):
        spec = properties[key]
        kind = _g4_type(spec)
        parts = []
        if spec.get("description"):
            parts.append(f"description:{_g4_value(spec['description'])}")
        if spec.get("nullable"):
            parts.append("nullable:true")
        if kind == "STRING" and spec.get("enum"):
            parts.append(f"enum:{_g4_value(list(spec['enum']))}")
        elif kind == "OBJECT" and isinstance(spec.get("properties"), Mapping):
            parts.append("properties:{" + _g4_properties(spec["properties"]) + "}")
            if spec.get("required"):
                parts.append(f"required:{_g4_value(list(spec['required']))}")
        elif kind == "ARRAY" and isinstance(spec.get("items"), Mapping):
            item = spec["items"]
            item_parts = []
            for item_key in sorted(item):
                if item_key == "type":
                    item_parts.append(f"type:{_g4_value(_g4_type(item))}")
                elif item_key == "properties" and isinstance(item[item_key], Mapping):
                    item_parts.append("properties:{" + _g4_properties(item[item_key]) + "}")
                elif item[item_key] is not None:
                    item_parts.append(f"{item_key}:{_g4_value(item[item_key])}")
            parts.append("items:{" + ",".join(item_parts) + "}")
        parts.append(f"type:{_g4_value(kind)}")
        entries.append(f"{key}:{{{','.join(parts)}}}")
    return ",".join(entries)


def gemma4_declaration(tool: ToolSpec) -> str:
    parts = [f"description:{_g4_value(tool.description)}"]
    params = tool.parameters or {}
    if params:
        inner = []
        if params.get("properties"):
            inner.append("properties:{" + _g4_properties(params["properties"]) + "}")
        if params.get("required"):
            inner.append(f"required:{_g4_value(list(params['required']))}")
        inner.append(f"type:{_g4_value(_g4_type(params) if params.get('type') else 'OBJECT')}")
        parts.append("parameters:{" + ",".join(inner) + "}")
    return f"<|tool>declaration:{tool.name}{{{','.join(parts)}}}<tool|>"


def gemma4_call(call: ToolCall) -> str:
    args = ",".join(f"{key}:{_g4_value(call.arguments[key], False)}" for key in sorted(call.arguments))
    return f"<|tool_call>call:{call.name}{{{args}}}<tool_call|>"


def gemma4_response(message: Message) -> str:
    value = tool_result_value(message.content)
    if isinstance(value, Mapping):
        body = ",".join(f"{key}:{_g4_value(value[key], False)}" for key in sorted(value))
    else:
        body = f"value:{_g4_value(value, False)}"
    return f"<|tool_response>response:{message.name or 'unknown'}{{{body}}}<tool_response|>"


_G4_THOUGHT = re.compile(re.escape(GEMMA4_THINK_OPEN) + r".*?" + re.escape(GEMMA4_THINK_CLOSE), re.DOTALL)


@dataclass(frozen=True)
class Gemma4Format(ChatFormat):
    """Gemma 4 turns (`<|turn>role\\n…<turn|>`), written like llama.cpp's gemma4.jinja.

    Thinking on puts `<|think|>` at the top of the system turn; thinking off ends the
    generation prompt with an empty thought channel. Tool results go in the model turn that
    made the call, right after it.
    """

    name: str = "gemma4"
    think_open: str = GEMMA4_THINK_OPEN
    think_close: str = GEMMA4_THINK_CLOSE
    stop: tuple[str, ...] = ("<turn|>", "<|turn>", "<|tool_response>")
    capabilities: Capabilities = field(default_factory=lambda: Capabilities(True, True))

    def _render(self, messages: list[Message], tools: list[ToolSpec], thinking: bool,
                conversational: bool, add_generation_prompt: bool) -> str:
        out = []
        rest = messages
        if thinking or tools or messages[0].role == "system":
            out.append("<|turn>system\n")
            if thinking:
                out.append("<|think|>")
            if messages[0].role == "system":
                out.append(messages[0].content.strip())
                rest = messages[1:]
            out.extend(gemma4_declaration(t) for t in tools)
            out.append("<turn|>\n")
        open_model_turn = False  # a model turn left open by tool responses
        for message in rest:
            if message.role == "tool":
                if not open_model_turn:
                    out.append("<|turn>model\n")
                out.append(gemma4_response(message))
                open_model_turn = True
                continue
            if message.role == "assistant":
                if not open_model_turn:
                    out.append("<|turn>model\n")
                out.extend(gemma4_call(c) for c in message.tool_calls)
                out.append(_G4_THOUGHT.sub("", message.content).strip())
                open_model_turn = bool(message.tool_calls)
                if not open_model_turn:
                    out.append("<turn|>\n")
                continue
            if open_model_turn:
                out.append("<turn|>\n")
                open_model_turn = False
            out.append(f"<|turn>{message.role}\n{message.content.strip()}<turn|>\n")
        if add_generation_prompt:
            if not open_model_turn:
                out.append("<|turn>model\n")
            if not thinking:
                out.append(f"{GEMMA4_THINK_OPEN}\n{GEMMA4_THINK_CLOSE}")
        return "".join(out)


def builtin_format(architecture: str) -> ChatFormat:
    if architecture in ("gemma3", "gemma3n", "gemma2", "gemma"):
        return Gemma3Format()
    if architecture.startswith("gemma4"):
        return Gemma4Format()
    return ChatMLFormat()
