"""What interfaces hand the agent, and what they get back while a turn runs."""

from __future__ import annotations

import threading
import unicodedata
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Union

from hub.core.messages import ToolCall
from hub.core.tools import ToolResult
from hub.llm.types import Reasoning, Usage

MAX_REQUEST_CHARS = 4000  # a request's text, on every route


def request_problem(text: object) -> str | None:
    """Why a request's text cannot be a turn ("empty", "too_long"), or None (the agent, Wyoming)."""
    if not isinstance(text, str) or not text.strip():
        return "empty"
    if len(text) > MAX_REQUEST_CHARS:
        return "too_long"
    return None


def without_format_characters(text: str) -> str:
    """`text` less its invisible format characters (Unicode Cf: zero-width spaces and joiners,
    soft hyphens, direction marks, BOMs): pasted or synthesized text carries them inside words,
    where they split "kit\u200bchen" in two and the command misses every name."""
    if text.isascii():
        return text
    return "".join(ch for ch in text if unicodedata.category(ch) != "Cf")


@dataclass(frozen=True)
class TurnRequest:
    text: str
    conversation_id: str | None = None  # None: a new conversation
    language: str | None = None  # None: the configured default
    source: str = "cli"  # cli | wyoming | mqtt | rest
    satellite_id: str | None = None
    device_id: str | None = None
    area: str | None = None  # the speaker's area as the client names it (an area id or name)
    floor: str | None = None  # its floor as the client names it, for a home whose floors the hub does not know
    conversational: bool | None = None  # None: the configured default
    reasoning: Reasoning | None = None  # None: the configured default
    persona: str | None = None
    # what the client tells the model about this request (Home Assistant's extra_system_prompt:
    # "You asked the user whether to close the garage"); volatile, never in the stable prompt
    extra_system_prompt: str | None = None
    # who asks, the same across that client's connections: "wyoming:<peer host>/<satellite>",
    # "mqtt:<client field>", "rest:token:<token digest>@<address>" (or the ingress user). A
    # confirmation counts only from the client that was asked, a plan runs only for the client
    # that made it, and a request without a conversation id continues that client's
    # conversation only while it waits for an answer. None: unknown (never continued).
    client: str | None = None
    # a spoken turn's: cleared while its first sentence is synthesized, so that on a CPU the
    # hub shares with its TTS server the model writes on only once that sentence's audio has
    # started (the next sentence is needed only after this one is heard). None: decode freely.
    decode_gate: threading.Event | None = field(default=None, compare=False, repr=False)


# --- events streamed while a turn runs ------------------------------------------------------


@dataclass(frozen=True)
class ReplyChunk:
    """Speakable reply text as it streams (thinking never appears here): whole sentences, each
    chunk ending on a sentence boundary, led by the separator from the one before (" ")."""

    text: str


@dataclass(frozen=True)
class ToolStarted:
    call: ToolCall


@dataclass(frozen=True)
class ToolFinished:
    call: ToolCall
    ok: bool
    data: dict[str, Any]
    seconds: float
    changed_entities: tuple[str, ...] = ()  # the entities the call acted on (ToolResult's)

    @classmethod
    def of(cls, call: ToolCall, result: ToolResult, seconds: float) -> ToolFinished:
        return cls(call, result.ok, result.data, seconds, result.changed_entities)


@dataclass
class TurnTimings:
    """A turn's times and tokens: its model rounds' usage added up (`model`), and what only the
    turn knows (its first reply token, its tools, its whole length)."""

    model: Usage = field(default_factory=Usage)
    first_token_s: float = 0.0  # from turn start to the first reply token
    tools_s: float = 0.0
    total_s: float = 0.0
    model_rounds: int = 0

    def add_usage(self, usage: Usage) -> None:
        self.model.add(usage)
        self.model_rounds += 1

    def as_json(self) -> dict[str, float | int]:
        """The timings as the REST and MQTT APIs report them (one flat object)."""
        model = self.model
        return {"prefill_s": model.prefill_s, "first_token_s": self.first_token_s, "decode_s": model.decode_s,
                "thinking_s": model.thinking_s, "tools_s": self.tools_s, "total_s": self.total_s,
                "prompt_tokens": model.prompt_tokens, "evaluated_prompt_tokens": model.evaluated_prompt_tokens,
                "completion_tokens": model.completion_tokens, "thinking_tokens": model.thinking_tokens,
                "model_rounds": self.model_rounds}


@dataclass
class TurnResult:
    conversation_id: str
    language: str
    reply: str  # the speakable reply
    ok: bool = True  # False: the turn failed and `reply` is the spoken error
    error: str | None = None  # machine-readable error code
    tool_calls: list[ToolFinished] = field(default_factory=list)
    timings: TurnTimings = field(default_factory=TurnTimings)
    path: str = "model"  # model | fast_path | confirmation | resolution ("which one?", "can't find")
    # what a turn answered without the model did or answered: an intent of Home Assistant's
    # ("HassTurnOn"), or "not_found", "not_understood", "which_one", "confirmed", … (DirectAnswer's)
    intent: str | None = None
    withheld: list[str] = field(default_factory=list)  # why each sentence of the model was not spoken
    # what the reply waits for, so that a voice client listens again at once: "confirmation" (a yes
    # or no to a held action), "choice" (the answer to "which one?"), "question" (the reply asks
    # something else); None: nothing
    awaiting: str | None = None


@dataclass(frozen=True)
class TurnDone:
    result: TurnResult


TurnEvent = Union[ReplyChunk, ToolStarted, ToolFinished, TurnDone]


async def final_result(events: AsyncIterator[TurnEvent]) -> TurnResult:
    """The result a turn's events end with, read to their end (Agent.run's last event is
    always TurnDone: the one place that guarantees it)."""
    result: TurnResult | None = None
    async for event in events:
        if isinstance(event, TurnDone):
            result = event.result
    if result is None:
        raise RuntimeError("the turn ended without TurnDone")
    return result
