"""The chat format protocol: how one model family wants its conversations written.

Families: `builtin_formats` (ChatML, Gemma 3, Gemma 4) and `template_format` (a GGUF's own Jinja
template, and the choice between the two). Every format renders deterministically, and the text
of the first messages never depends on what follows them, so the prompt's stable prefix
(instructions, tools, entity list) stays byte-identical across turns and llama.cpp can reuse its
KV cache.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Sequence

from hub.core.messages import Message, ToolSpec
from hub.llm.types import EngineError

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"
GEMMA4_THINK_OPEN = "<|channel>thought"
GEMMA4_THINK_CLOSE = "<channel|>"

TEXT_TOOL_CALL_OPEN = "<tool_call>"
TEXT_TOOL_CALL_CLOSE = "</tool_call>"
TEXT_TOOL_RESPONSE_OPEN = "<tool_response>"
TEXT_TOOL_RESPONSE_CLOSE = "</tool_response>"


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

