"""What an engine is asked and streams back: requests, reasoning, constraints, deltas, usage.

The messages and tools themselves are the hub's floor (hub.core.messages)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from enum import Enum
from typing import AsyncGenerator, Protocol, Union

from hub.core.messages import Message, ToolCall, ToolSpec


class ReasoningMode(str, Enum):
    ON = "on"
    OFF = "off"
    BUDGET = "budget"


@dataclass(frozen=True)
class Reasoning:
    mode: ReasoningMode = ReasoningMode.OFF
    budget: int = 256  # thinking tokens allowed when mode is BUDGET


@dataclass(frozen=True)
class ToolConstraint:
    """Constrained decoding: the next output must be one call to one of `tool_names`.

    `entity_ids` is the enum the grammar offers for every entity argument
    (the candidates the resolver found for this request).
    """

    tool_names: tuple[str, ...]
    entity_ids: tuple[str, ...]
    answer: bool = False  # the model may also answer in words instead of calling


@dataclass
class GenerationRequest:
    messages: list[Message]
    tools: list[ToolSpec] = field(default_factory=list)
    reasoning: Reasoning = field(default_factory=Reasoning)
    conversational: bool = True
    max_tokens: int = 512
    temperature: float = 0.2
    constraint: ToolConstraint | None = None
    # time.monotonic() by which the caller needs the generation done (its turn timeout); an
    # engine whose queue says it would not be refuses it with EngineBusy instead of starting it
    deadline: float | None = None
    # set by the consumer to end the generation early (a capped reply, a model that repeats
    # itself, a stop sequence): the engine stops at its next token and sends only the final Done,
    # whose usage counts what was evaluated and generated so far (stop_reason "halted"); copies
    # of the request (`dataclasses.replace`) share it
    halt: threading.Event = field(default_factory=threading.Event, compare=False, repr=False)
    # a voice turn's (`TurnRequest.decode_gate`): the local engine decodes only while it is set
    decode_gate: threading.Event | None = field(default=None, compare=False, repr=False)
    # the interface that asked (TurnRequest.source): the queue is shared fairly among them
    source: str = ""


# --- stream deltas -------------------------------------------------------------------------


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ThinkingDelta:
    text: str


@dataclass(frozen=True)
class ToolCallDelta:
    call: ToolCall


@dataclass(frozen=True)
class MalformedToolCall:
    """The model started a tool call the parser could not read; `raw` is what it wrote."""

    raw: str
    error: str


@dataclass
class Usage:
    """Token counts and timings (seconds) of one generation."""

    prompt_tokens: int = 0
    reused_prompt_tokens: int = 0  # taken from the KV cache, not evaluated again
    evaluated_prompt_tokens: int = 0
    completion_tokens: int = 0
    thinking_tokens: int = 0
    prefill_s: float = 0.0
    first_token_s: float = 0.0
    decode_s: float = 0.0
    thinking_s: float = 0.0
    total_s: float = 0.0
    stop_reason: str = "stop"  # stop | length | tool_call | budget | halted (`GenerationRequest.halt`) | error

    @property
    def decode_tokens_per_s(self) -> float:
        return self.completion_tokens / self.decode_s if self.decode_s > 0 else 0.0

    def add(self, other: "Usage") -> None:
        """Count another generation in (a turn's model rounds): counts and times add up; the
        first one's first token and the last one's stop reason stand."""
        for name in _ADDED_UP:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.first_token_s = self.first_token_s or other.first_token_s
        self.stop_reason = other.stop_reason


_ADDED_UP = ("prompt_tokens", "reused_prompt_tokens", "evaluated_prompt_tokens", "completion_tokens",
             "thinking_tokens", "prefill_s", "decode_s", "thinking_s", "total_s")


@dataclass(frozen=True)
class Done:
    usage: Usage


Delta = Union[TextDelta, ThinkingDelta, ToolCallDelta, MalformedToolCall, Done]


SMALL_MODEL_PARAMS = 2_000_000_000  # below this: `constrained_tools: auto` means on; a stand-in


@dataclass(frozen=True)
class ModelInfo:
    name: str
    architecture: str
    path: str
    n_ctx: int
    n_ctx_train: int
    n_params: int
    is_stand_in: bool = False  # an embedded test model standing in for Bolt E4B
    languages: tuple[str, ...] = ()  # the languages its file says it speaks (GGUF general.languages); none: any


def stands_in(is_stand_in: bool, n_params: int) -> bool:
    """The embedded default, or any model under the small-model size: it may chat and read
    states, but device actions come only from the deterministic path unless
    `model_home_control` allows it (its entity choices are not to be trusted)."""
    return is_stand_in or 0 < n_params < SMALL_MODEL_PARAMS


class EngineError(RuntimeError):
    """A model problem worth telling the user in plain words (bad file, context too long, ...)."""


class EngineBusy(EngineError):
    """Too many requests are already waiting for the model."""


class PromptTooLong(EngineError):
    """The rendered prompt does not fit the context window (n_ctx)."""


class Engine(Protocol):
    """Streams typed deltas for a chat request. Implementations must not block the event loop."""

    info: ModelInfo
    @property
    def uses_constrained_tools(self) -> bool:
        """Small models call tools under a grammar: the agent then passes a ToolConstraint."""
        ...

    def stream(self, request: GenerationRequest) -> AsyncGenerator[Delta, None]:
        """Yield Text/Thinking/ToolCall/MalformedToolCall deltas and exactly one final Done; once
        `request.halt` is set, only that Done (with the usage so far)."""
        ...

    def count_tokens(self, text: str) -> int: ...

    def memory(self) -> dict[str, int]:
        """The model's resident memory in this process by part (`hub.memory`): weights,
        kv_cache, compute, prompt_states (bytes; none for a model served elsewhere)."""
        ...

    async def close(self) -> None: ...
