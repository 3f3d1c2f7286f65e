"""A GGUF's own Jinja chat template as a chat format, and the choice between it and a built-in one.

The GGUF's template is used when it has one; otherwise a built-in format picked by
`general.architecture` (Gemma 3, Gemma 4, else ChatML). llama-cpp-python's own fallback
(`llama-2`) is never used: it is wrong for every model the hub runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Mapping, Sequence

import jinja2
import jinja2.ext
from jinja2 import meta
from jinja2.sandbox import ImmutableSandboxedEnvironment

from hub.llm.builtin_formats import builtin_format
from hub.llm.chat_format import (
    GEMMA4_THINK_CLOSE,
    GEMMA4_THINK_OPEN,
    TEXT_TOOL_CALL_OPEN,
    TEXT_TOOL_RESPONSE_OPEN,
    THINK_CLOSE,
    THINK_OPEN,
    Capabilities,
    ChatFormat,
)
from hub.llm.text_tools import openai_tools, text_tool_turns, tool_result_value
from hub.core.messages import Message, ToolSpec
from hub.llm.types import EngineError

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
                    {"name": message.name or "unknown", "response": tool_result_value(message.content)}
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


def chat_format_for(metadata: Mapping[str, str], bos_token: str = "", eos_token: str = "") -> ChatFormat:
    """The GGUF's own template when it has one, else the built-in format for its architecture."""
    template = metadata.get("tokenizer.chat_template")
    if template:
        return TemplateChatFormat.from_template(template, bos_token=bos_token, eos_token=eos_token)
    return builtin_format(metadata.get("general.architecture", ""))
