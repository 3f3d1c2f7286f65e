"""Render a conversation (Messages + ToolSpecs) into the prompt text a model was trained on.

A GGUF's own Jinja chat template is used when it has one; otherwise a built-in format picked by
`general.architecture` (Gemma 3, Gemma 4, else ChatML). llama-cpp-python's own fallback
(`llama-2`) is never used: it is wrong for every model the hub runs.

Every format renders deterministically, and the text of the first messages never depends on
what follows them, so the prompt's stable prefix (instructions, tools, entity list) stays
byte-identical across turns and llama.cpp can reuse its KV cache.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Iterable, Mapping, Sequence

import jinja2
import jinja2.ext
from jinja2 import meta
from jinja2.sandbox import ImmutableSandboxedEnvironment

from hub.llm.types import EngineError, Message, ToolCall, ToolSpec

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"
GEMMA4_THINK_OPEN = "<|channel>thought"
GEMMA4_THINK_CLOSE = "<channel|>"

TEXT_TOOL_CALL_OPEN = "<tool_call>"
TEXT_TOOL_CALL_CLOSE = "</tool_call>"
TEXT_TOOL_RESPONSE_OPEN = "<tool_response>"
TEXT_TOOL_RESPONSE_CLOSE = "</tool_response>"

# Markers that end or start a turn in common templates: generation stops at any of them.
_TURN_MARKERS = (
    "<|im_end|>",
    "<|im_start|>",
    "<end_of_turn>",
    "<start_of_turn>",
    "<turn|>",
    "<|turn>",
    "<|eot_id|>",
    "<|start_header_id|>",
    "<|end|>",
    "<|endoftext|>",
)


@dataclass(frozen=True)
class RenderedPrompt:
    """The prompt text, and whether generation starts inside an open thinking block."""

    text: str
    starts_in_thinking: bool = False


@dataclass(frozen=True)
class Capabilities:
    """What a format can express natively."""

    native_tools: bool  # declarations and calls in the model's own syntax
    thinking_switch: bool  # the format itself turns thinking on/off (else: force the marker)
    conversational_variable: str | None = None  # template variable for conversational mode
    system_role: bool = True


@dataclass(frozen=True)
class ChatFormat(ABC):
    """How one model family wants its conversations written."""

    name: str
    think_open: str = THINK_OPEN
    think_close: str = THINK_CLOSE
    stop: tuple[str, ...] = ()
    capabilities: Capabilities = field(default_factory=lambda: Capabilities(False, False))
    # Text the engine puts before a grammar-constrained JSON call (text-tool formats only).
    constrained_call_prefix: str = ""

    def render(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        *,
        thinking: bool = False,
        conversational: bool = True,
        add_generation_prompt: bool = True,
    ) -> RenderedPrompt:
        """The prompt for `messages`; with `thinking`, generation may (or must) start by thinking.

        A format without a thinking switch gets the open marker appended to the generation
        prompt ("forced open"); `starts_in_thinking` tells the stream parser so.
        """
        if not messages:
            raise EngineError("cannot build a prompt from an empty message list")
        text = self._render(list(messages), list(tools), thinking, conversational, add_generation_prompt)
        if not add_generation_prompt:
            return RenderedPrompt(text, False)
        if thinking and not self.capabilities.thinking_switch:
            text += self.think_open + "\n"
        return RenderedPrompt(text, text.rstrip().endswith(self.think_open))

    @property
    def close_thinking(self) -> str:
        """What the engine appends when a thinking budget runs out: close marker + a bridge."""
        return self.think_close + "\n"

    @abstractmethod
    def _render(
        self,
        messages: list[Message],
        tools: list[ToolSpec],
        thinking: bool,
        conversational: bool,
        add_generation_prompt: bool,
    ) -> str: ...


# --- shared helpers --------------------------------------------------------------------------


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _tool_result_value(content: str) -> Any:
    """A tool result's content is JSON text; keep it as data when it parses."""
    try:
        return json.loads(content)
    except (ValueError, TypeError):
        return content


def openai_tools(tools: Iterable[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
        for t in tools
    ]


def text_tool_instructions(tools: Sequence[ToolSpec]) -> str:
    """Tool declarations for a format with no tool syntax of its own (goes into the system text)."""
    lines = [
        "You can call these tools. Each line inside <tools></tools> describes one tool:",
        "<tools>",
        *(_dumps(entry["function"]) for entry in openai_tools(tools)),
        "</tools>",
        "To call a tool, answer with only this, one line per call:",
        f'{TEXT_TOOL_CALL_OPEN}{{"name": "<tool name>", "arguments": {{<arguments as JSON>}}}}{TEXT_TOOL_CALL_CLOSE}',
        f"Tool results come back inside {TEXT_TOOL_RESPONSE_OPEN}{TEXT_TOOL_RESPONSE_CLOSE}.",
    ]
    return "\n".join(lines)


def text_tool_call(call: ToolCall) -> str:
    return f"{TEXT_TOOL_CALL_OPEN}{_dumps({'name': call.name, 'arguments': call.arguments})}{TEXT_TOOL_CALL_CLOSE}"


def text_tool_result(message: Message) -> str:
    payload = {"name": message.name or "", "result": _tool_result_value(message.content)}
    return f"{TEXT_TOOL_RESPONSE_OPEN}{_dumps(payload)}{TEXT_TOOL_RESPONSE_CLOSE}"


@dataclass
class _Turn:
    role: str  # system | user | assistant
    content: str


def text_tool_turns(
    messages: Sequence[Message], tools: Sequence[ToolSpec], *, system_role: bool = True
) -> list[_Turn]:
    """Messages as plain turns for a format without tool syntax.

    Tool declarations join the system text; assistant calls become `<tool_call>` text; tool
    results become a user turn of `<tool_response>` text. Consecutive turns of one role are
    merged, so formats that insist on alternating roles accept the result.
    """
    turns: list[_Turn] = []
    system_parts = [m.content.strip() for m in messages[:1] if m.role == "system"]
    rest = messages[1:] if system_parts else messages
    if tools:
        system_parts.append(text_tool_instructions(tools))
    system_text = "\n\n".join(p for p in system_parts if p)
    if system_text:
        turns.append(_Turn("system", system_text))
    for message in rest:
        if message.role == "tool":
            role, content = "user", text_tool_result(message)
        elif message.role == "assistant":
            calls = "\n".join(text_tool_call(c) for c in message.tool_calls)
            role, content = "assistant", "\n".join(p for p in (message.content.strip(), calls) if p)
        else:  # a later system message is a note to the model: it goes in as user text
            role, content = "user", message.content.strip()
        if turns and turns[-1].role == role:
            turns[-1].content += "\n\n" + content
        else:
            turns.append(_Turn(role, content))
    if not system_role and turns and turns[0].role == "system":
        system = turns.pop(0)
        if turns and turns[0].role == "user":
            turns[0].content = system.content + "\n\n" + turns[0].content
        else:
            turns.insert(0, _Turn("user", system.content))
    return turns


# --- built-in formats ------------------------------------------------------------------------


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
    value = _tool_result_value(message.content)
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


# --- the GGUF's own Jinja template -----------------------------------------------------------


class _IgnoreGenerationTag(jinja2.ext.Extension):
    """HF's `{% generation %}…{% endgeneration %}` marks training spans: render the body as is."""

    tags = {"generation"}

    def parse(self, parser):  # type: ignore[no-untyped-def]
        parser.stream.skip(1)
        return parser.parse_statements(("name:endgeneration",), drop_needle=True)


def _raise_exception(message: str) -> None:
    raise jinja2.TemplateError(message)


def _tojson(value: Any, ensure_ascii: bool = False, indent: int | None = None,
            separators: tuple[str, str] | None = None, sort_keys: bool = False) -> str:
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _strftime_now(fmt: str) -> str:
    return datetime.now().strftime(fmt)


@dataclass(frozen=True)
class TemplateChatFormat(ChatFormat):
    """A GGUF's `tokenizer.chat_template`, rendered in a sandbox the way HF transformers does.

    Tools and calls are passed in OpenAI shape when the template declares `tools` and renders
    `tool_calls`; otherwise they are written as text (see `text_tool_turns`). `enable_thinking`
    and a conversational variable are passed only when the template reads them.

    Conversational mode reaches every model as an instruction in the agent's system text, and a
    template that declares a variable for it (any undeclared variable named `*conversational*`)
    gets that variable too, from the same flag: the instruction and the switch always say the
    same thing, and the system text does not depend on which model runs it.
    """

    name: str = "template"
    template: str = ""
    bos_token: str = ""
    eos_token: str = ""
    _compiled: jinja2.Template | None = field(default=None, repr=False, compare=False)
    _tool_responses_in_turn: bool = False  # Gemma 4 style: results ride on the model message

    @classmethod
    def from_template(cls, template: str, bos_token: str = "", eos_token: str = "") -> "TemplateChatFormat":
        env = ImmutableSandboxedEnvironment(
            loader=jinja2.BaseLoader(),
            trim_blocks=True,
            lstrip_blocks=True,
            extensions=[_IgnoreGenerationTag, jinja2.ext.loopcontrols],
        )
        env.filters["tojson"] = _tojson
        try:
            variables = meta.find_undeclared_variables(env.parse(template))
            compiled = env.from_string(template)
        except jinja2.TemplateError as err:
            raise EngineError(f"the model's chat template is not valid Jinja: {err}") from None
        native_tools = "tools" in variables and "tool_calls" in template
        conversational = next((v for v in sorted(variables) if "conversational" in v), None)
        gemma4 = GEMMA4_THINK_CLOSE in template
        stop = tuple(m for m in _TURN_MARKERS if m in template)
        if eos_token and eos_token not in stop:
            stop += (eos_token,)
        stop += ("<|tool_response>",) if gemma4 else (TEXT_TOOL_RESPONSE_OPEN,)
        probe = cls(
            template=template,
            bos_token=bos_token,
            eos_token=eos_token,
            _compiled=compiled,
            capabilities=Capabilities(native_tools, "enable_thinking" in variables, conversational, True),
        )
        system_role = probe._accepts([{"role": "system", "content": "s"}, {"role": "user", "content": "u"}])
        return cls(
            name="template",
            template=template,
            bos_token=bos_token,
            eos_token=eos_token,
            _compiled=compiled,
            _tool_responses_in_turn="tool_responses" in template,
            think_open=GEMMA4_THINK_OPEN if gemma4 else THINK_OPEN,
            think_close=GEMMA4_THINK_CLOSE if gemma4 else THINK_CLOSE,
            stop=stop,
            capabilities=Capabilities(native_tools, "enable_thinking" in variables, conversational, system_role),
            constrained_call_prefix="" if native_tools else TEXT_TOOL_CALL_OPEN,
        )

    def _accepts(self, messages: list[dict[str, Any]]) -> bool:
        try:
            self._call(messages, None, {})
        except jinja2.TemplateError:
            return False
        return True

    def _call(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
              extra: dict[str, Any], add_generation_prompt: bool = True) -> str:
        assert self._compiled is not None, "a TemplateChatFormat is made by from_template"
        return self._compiled.render(
            messages=messages,
            tools=tools,
            bos_token=self.bos_token,
            eos_token=self.eos_token,
            add_generation_prompt=add_generation_prompt,
            raise_exception=_raise_exception,
            strftime_now=_strftime_now,
            **extra,
        )

    def _render(self, messages: list[Message], tools: list[ToolSpec], thinking: bool,
                conversational: bool, add_generation_prompt: bool) -> str:
        caps = self.capabilities
        extra: dict[str, Any] = {}
        if caps.thinking_switch:
            extra["enable_thinking"] = thinking
        if caps.conversational_variable:
            extra[caps.conversational_variable] = conversational
        if caps.native_tools:
            payload = self._native_messages(messages)
            tool_payload = openai_tools(tools) or None
        else:
            turns = text_tool_turns(messages, tools, system_role=caps.system_role)
            payload = [{"role": t.role, "content": t.content} for t in turns]
            tool_payload = None
        try:
            return self._call(payload, tool_payload, extra, add_generation_prompt)
        except jinja2.TemplateError as err:
            raise EngineError(f"the model's chat template rejected the conversation: {err}") from None

    def _native_messages(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for message in messages:
            if message.role == "tool" and self._tool_responses_in_turn and out and out[-1]["role"] == "assistant":
                out[-1].setdefault("tool_responses", []).append(
                    {"name": message.name or "unknown", "response": _tool_result_value(message.content)}
                )
                continue
            if (
                message.role == "assistant"
                and self._tool_responses_in_turn
                and out
                and out[-1].get("tool_responses")
                and not out[-1]["content"]
            ):
                out[-1]["content"] = message.content  # the answer after the results, same turn
                continue
            entry: dict[str, Any] = {"role": message.role, "content": message.content}
            if message.tool_calls:
                entry["tool_calls"] = [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                    for c in message.tool_calls
                ]
            if message.role == "tool":
                entry["tool_call_id"] = message.tool_call_id or ""
                entry["name"] = message.name or ""
            out.append(entry)
        return out


# --- choosing ---------------------------------------------------------------------------------


def builtin_format(architecture: str) -> ChatFormat:
    if architecture in ("gemma3", "gemma3n", "gemma2", "gemma"):
        return Gemma3Format()
    if architecture.startswith("gemma4"):
        return Gemma4Format()
    return ChatMLFormat()


def chat_format_for(metadata: Mapping[str, str], bos_token: str = "", eos_token: str = "") -> ChatFormat:
    """The GGUF's own template when it has one, else the built-in format for its architecture."""
    template = metadata.get("tokenizer.chat_template")
    if template:
        return TemplateChatFormat.from_template(template, bos_token=bos_token, eos_token=eos_token)
    return builtin_format(metadata.get("general.architecture", ""))
