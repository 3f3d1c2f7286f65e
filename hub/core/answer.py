"""A turn answered without the model: the fast path's, the confirmation hook's and the resolver's."""

from __future__ import annotations

from dataclasses import dataclass, field
from hub.core.tools import ToolResult
from hub.core.messages import ToolCall


@dataclass
class DirectAnswer:
    reply: str
    intent: str  # the intent carried out or answered; "ambiguous", "not_found"; "+"-joined parts
    calls: list[ToolCall] = field(default_factory=list)
    results: list[ToolResult] = field(default_factory=list)
    candidates: list[str] = field(default_factory=list)  # entity ids, when `intent` is "ambiguous"
    slots: list[dict[str, str]] = field(default_factory=list)  # each command's slots, as said (a plan shows them)
