"""The safety policy every home action passes before it reaches a device.

Checked inside the tools, after the model produced its arguments, so nothing the model says —
and no entity name, alias or state quoted in its prompt — can widen it:
- only allowed domains (and, when listed, services) are controlled; read-only entities never are;
- sensitive actions (unlocking, disarming, moving garage doors, gates and doors, anything the
  user lists) need a spoken "yes" in the same conversation, from the same route and client,
  within a time window: the tool asks instead of acting, and the agent runs the stored calls
  when the yes arrives (`hub.agent.pending`). The sensitive calls of one request ("unlock all
  the locks") are held together: one question names (or counts) them, one yes runs them all;
- each entity may be changed only so often per minute;
- every executed action is logged with its conversation, source and outcome.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import logging
import time
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Sequence

from hub.config import OPTION_BY_NAME
from hub.home.entities import Entity
from hub.core.speech import CONFIRMATION_REQUIRED
from hub.core.tools import ToolContext, ToolError
from hub.core.messages import ToolCall
from hub.locales import join_list, phrase, plural_phrase

ACTION_LOG = logging.getLogger("hub.actions")

DEFAULT_ALLOWED_DOMAINS: str = OPTION_BY_NAME["allowed_domains"].default
SENSITIVE_DOMAINS = frozenset({"lock", "alarm_control_panel"})
SENSITIVE_COVER_CLASSES = frozenset({"garage", "gate", "door"})
# The safe direction on a sensitive entity needs no confirmation: locking, arming.
SAFE_SERVICES = {"lock": ("lock",), "alarm_control_panel": ("alarm_arm_*",)}
RATE_WINDOW_S = 60.0
NAMED_IN_QUESTION = 3
# ActionPolicy.verdict's answers
ALLOWED, CONFIRM, NOT_ALLOWED, RATE_LIMITED = "allowed", "confirm", "not_allowed", "rate_limited"  # more held devices of one verb are counted in the question, not named


# The verb `policy.confirm` needs ("Do you really want me to {action} {name}?"), per service:
# the `policy.verb.<verb>` phrase of the request's language.
_VERB_OF_SERVICE = {
    "unlock": "unlock", "open": "open", "lock": "lock", "open_cover": "open", "open_valve": "open",
    "close_cover": "close", "close_valve": "close", "set_cover_position": "move",
    "set_valve_position": "move", "alarm_disarm": "disarm", "turn_on": "turn_on",
    "turn_off": "turn_off", "toggle": "change",
}


@dataclass(frozen=True)
class PendingAction:
    """A sensitive call held until the user says yes in the same conversation."""

    call: ToolCall
    entity_id: str
    entity_name: str
    service: str


@dataclass
class Held:
    """The sensitive calls one request planned, waiting together for one yes."""

    ctx: ToolContext  # the request that asked (its route and client must answer)
    asked_at: float  # policy clock (monotonic)
    actions: list[PendingAction]


@dataclass(frozen=True)
class PolicyOptions:
    allowed_domains: str
    allowed_services: str | None
    read_only_entities: str | None
    confirm_entities: str | None
    confirm_seconds: int
    rate_limit_per_minute: int


def parse_patterns(value: str | Iterable[str] | None) -> tuple[str, ...]:
    """Comma-separated (or listed) ids/globs, lower-cased, blanks dropped."""
    items = value.split(",") if isinstance(value, str) else (value or ())
    return tuple(p.strip().lower() for p in items if p and p.strip())


def confirm_verb(service: str, language: str) -> str:
    verb = _VERB_OF_SERVICE.get(service, "arm" if service.startswith("alarm_arm") else "change")
    return phrase(language, f"policy.verb.{verb}")


def confirm_question(actions: Sequence[PendingAction], language: str) -> str:
    """One question for held calls: a sentence per verb, naming its devices ("Do you really want
    me to unlock Front door and Back door?"), or counting them when there are many ("… unlock
    5 devices?")."""
    by_verb: dict[str, list[str]] = {}
    for action in actions:
        names = by_verb.setdefault(confirm_verb(action.service, language), [])
        if action.entity_name not in names:
            names.append(action.entity_name)
    return " ".join(
        phrase(language, "policy.confirm", action=verb, name=join_list(names, language))
        if len(names) <= NAMED_IN_QUESTION
        else plural_phrase(language, "policy.confirm_many", len(names), action=verb)
        for verb, names in by_verb.items())


class ActionPolicy:
    def __init__(
        self,
        *,
        allowed_domains: str | Iterable[str] = DEFAULT_ALLOWED_DOMAINS,
        allowed_services: str | Iterable[str] | None = None,
        read_only_entities: str | Iterable[str] | None = None,
        confirm_entities: str | Iterable[str] | None = None,
        confirm_seconds: float = 30.0,
        rate_limit_per_minute: int = 0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.allowed_domains = frozenset(parse_patterns(allowed_domains))
        self.allowed_services = parse_patterns(allowed_services)  # "domain.service" globs; () = any
        self.read_only = parse_patterns(read_only_entities)
        self.confirm_entities = parse_patterns(confirm_entities)
        self.confirm_seconds = float(confirm_seconds)
        self.rate_limit = int(rate_limit_per_minute)  # 0: no limit
        self._clock = clock
        self._pending: dict[str, Held] = {}  # conversation id → its request's held calls
        self._grants: set[tuple[str, str, str]] = set()  # (conversation, entity, service) confirmed
        self._recent: dict[str, deque[float]] = {}  # entity id → times of executed actions

    @classmethod
    def from_options(cls, options: PolicyOptions, clock: Callable[[], float] = time.monotonic) -> "ActionPolicy":
        return cls(**dataclasses.asdict(options), clock=clock)

    # --- the checks ---------------------------------------------------------------------------

    def allows(self, entity: Entity, service: str) -> bool:
        """Whether the hub may ever make this call (with a confirmation if it is sensitive)."""
        entity_id = entity.entity_id.lower()
        if entity.domain not in self.allowed_domains:
            return False
        if any(fnmatch.fnmatchcase(entity_id, p) for p in self.read_only):
            return False
        if self.allowed_services:
            name = f"{entity.domain}.{service}".lower()
            return any(fnmatch.fnmatchcase(name, p) for p in self.allowed_services)
        return True

    def needs_confirmation(self, entity: Entity, service: str) -> bool:
        safe = SAFE_SERVICES.get(entity.domain, ())
        if any(fnmatch.fnmatchcase(service, p) for p in safe):
            return False
        if entity.domain in SENSITIVE_DOMAINS:
            return True
        if entity.domain == "cover" and (entity.device_class or "") in SENSITIVE_COVER_CLASSES:
            return True
        return any(fnmatch.fnmatchcase(entity.entity_id.lower(), p) for p in self.confirm_entities)

    def verdict(self, entity: Entity, service: str) -> str:
        """What `check` would decide now, changing nothing (a plan's dry run): "not_allowed",
        "rate_limited", "confirm" (it would ask for a yes) or "allowed"."""
        if not self.allows(entity, service):
            return NOT_ALLOWED
        if self._rate_limited(entity.entity_id):
            return RATE_LIMITED
        return CONFIRM if self.needs_confirmation(entity, service) else ALLOWED

    @staticmethod
    def refusal(entity: Entity, verdict: str, language: str) -> ToolError:
        """The error a call refused with `verdict` (not_allowed, rate_limited) answers."""
        return ToolError(phrase(language, f"policy.{verdict}", name=entity.name), code=verdict,
                         entity_id=entity.entity_id)

    def check(self, entity: Entity, service: str, call: ToolCall, ctx: ToolContext) -> None:
        """Raise a ToolError with a spoken reason unless the call may run now.

        A sensitive call without a confirmation is held for the conversation and answered
        with the question (`error: confirmation_required`); a call of the request that holds
        calls already joins them, and its question asks for all of them (a new request's
        replaces them).
        """
        verdict = self.verdict(entity, service)
        if verdict in (NOT_ALLOWED, RATE_LIMITED):
            self._log(entity, service, ctx, f"refused: {verdict.replace('_', ' ')}")
            raise self.refusal(entity, verdict, ctx.language)
        if verdict == ALLOWED:
            return
        grant = (ctx.conversation_id, entity.entity_id, service)
        if grant in self._grants:
            self._grants.discard(grant)  # one confirmation, one action
            return
        self._forget_expired()
        held = self._pending.get(ctx.conversation_id)
        if held is None or ctx.request is None or held.ctx.request != ctx.request:
            held = self._pending[ctx.conversation_id] = Held(ctx, self._clock(), [])
        held.actions.append(PendingAction(call, entity.entity_id, entity.name, service))
        self._log(entity, service, ctx, "held: asked for confirmation")
        raise ToolError(confirm_question(held.actions, ctx.language), code=CONFIRMATION_REQUIRED, entity_id=entity.entity_id,
                        instruction="Nothing was done. Ask the user this question and wait for their answer.")

    def record(self, entity: Entity, service: str, data: dict[str, Any], ctx: ToolContext,
               outcome: str) -> None:
        """An action went to the device (outcome "ok" or the failure): count it, log it."""
        times = self._recent.setdefault(entity.entity_id, deque())
        times.append(self._clock())
        self._log(entity, service, ctx, outcome, data)

    # --- confirmations ------------------------------------------------------------------------

    def take_pending(self, conversation_id: str) -> Held | None:
        """The conversation's held calls, removed: any reply ends the wait."""
        return self._pending.pop(conversation_id, None)

    def has_pending(self, conversation_id: str) -> bool:
        return conversation_id in self._pending

    def peek_pending(self, conversation_id: str) -> Held | None:
        """The conversation's held calls, left held."""
        return self._pending.get(conversation_id)

    def is_fresh(self, held: Held) -> bool:
        return self._clock() - held.asked_at <= self.confirm_seconds

    @contextmanager
    def granted(self, held: Held, action: PendingAction) -> Iterator[None]:
        """Let exactly this confirmed call through once while the block runs."""
        grant = (held.ctx.conversation_id, action.entity_id, action.service)
        self._grants.add(grant)
        try:
            yield
        finally:
            self._grants.discard(grant)

    # --- helpers ------------------------------------------------------------------------------

    def _forget_expired(self) -> None:
        """Held actions of conversations that never answered (the next turn would drop them)."""
        for conversation_id in [c for c, p in self._pending.items() if not self.is_fresh(p)]:
            del self._pending[conversation_id]

    def _rate_limited(self, entity_id: str) -> bool:
        if self.rate_limit <= 0:
            return False
        times = self._recent.get(entity_id)
        if not times:
            return False
        cutoff = self._clock() - RATE_WINDOW_S
        while times and times[0] < cutoff:
            times.popleft()
        return len(times) >= self.rate_limit

    @staticmethod
    def _log(entity: Entity, service: str, ctx: ToolContext, outcome: str,
             data: dict[str, Any] | None = None) -> None:
        ACTION_LOG.info("action %s.%s %s%s conversation=%s source=%s: %s", entity.domain, service,
                        entity.entity_id, f" {data}" if data else "", ctx.conversation_id,
                        ctx.source, outcome)
