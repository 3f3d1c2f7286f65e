"""Plans: what the hub would do with a request, found without acting (the Test page, `POST
/api/plan`), kept for five minutes so that exactly that plan can be run once ("Run it").

A plan is a turn run on a throwaway conversation with `ToolContext.dry_run`: the routes and the
model run as for a real turn, every call is validated by the ToolRegistry, and a home tool stops
where it would act, saying what the policy would say (`hub.core.tools.WouldCall`). Nothing is
sent to a device, held for a yes, counted by the rate limit, started (timers) or kept in a
conversation. Running the plan later sends its calls through the ToolRegistry again, so
validation and the policy decide again.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Collection

from hub.agent.turn import TurnState
from hub.agent.types import ToolFinished, TurnRequest, TurnResult
from hub.core.messages import ToolCall
from hub.core.speech import CONFIRMATION_REQUIRED, speech_of
from hub.core.tools import ToolContext, ToolRegistry, ToolResult
from hub.home.resolve import Match

PLAN_TTL_S = 300.0  # a plan can be run within five minutes of being made
MAX_PLANS = 256  # plans kept at once (the oldest go first)
_SHOWN_LANGUAGES = 8  # the identifier's likeliest languages a plan shows

# A planned call's verdict, as the page words it.
WOULD_RUN, WOULD_ASK, UNCHECKED, READS = "would_run", "would_ask", "unchecked", "reads"
RUNNABLE = frozenset({WOULD_RUN, WOULD_ASK, UNCHECKED})  # what "Run it" sends again


class PlanNotRunnable(Exception):
    """No plan to run under that id: `code` says why (unknown_plan, plan_expired, plan_already_run,
    plan_of_another_client)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class LanguageReading:
    """Which language the request was taken in, and why."""

    used: str  # the language the turn went on in (a later candidate's templates may have matched)
    given: str | None  # what the request named
    preferred: str  # the conversation's, persona's or home's: it breaks ties
    candidates: list[str]  # tried in this order
    confidences: dict[str, float]  # the identifier's, for the text alone (empty: not loaded yet)


@dataclass(frozen=True)
class PlannedCall:
    """One call the plan would make, and what would become of it."""

    name: str
    arguments: dict[str, Any]
    verdict: str  # would_run | would_ask | not_allowed | rate_limited | unchecked | reads | an error code
    message: str | None = None  # the question it would ask, the refusal or the error
    entity_id: str | None = None
    service: str | None = None
    changes: bool | None = None  # False: the device is already so


@dataclass(frozen=True)
class WeighedEntity:
    """An entity the resolver weighed for the request's words."""

    entity_id: str
    name: str
    area: str | None
    best: bool  # among the best matches (what a small model's grammar is offered)


@dataclass
class TurnPlan:
    plan_id: str
    text: str
    persona: str
    language: LanguageReading
    path: str  # as TurnResult.path: fast_path | model | resolution | …
    intent: str | None  # the fast path's ("HassTurnOn"; "ambiguous", "not_found")
    slots: list[dict[str, str]]  # each command's slots, as said
    calls: list[PlannedCall]
    weighed: list[WeighedEntity]
    tier: str  # how the best matches were found: name | partial | area_domain | area | domain | ""
    reply: str | None  # what the hub would say, when it says it without acting (an answer, a question)
    withheld: list[str]  # why sentences of the model would not be spoken
    area: str | None
    device_id: str | None
    satellite_id: str | None = None
    expires_in_s: float = PLAN_TTL_S

    @property
    def runnable(self) -> list[PlannedCall]:
        return [c for c in self.calls if c.verdict in RUNNABLE]


@dataclass(frozen=True)
class PlanRun:
    """What running a plan did: each call's outcome, and the reply said of them."""

    plan_id: str
    language: str
    calls: list[ToolFinished]
    reply: str


def planned_call(finished: ToolFinished) -> PlannedCall:
    """A dry run's call as the plan shows it: what it would do and what the policy would say."""
    data = finished.data
    entity_id = data.get("entity_id") if isinstance(data.get("entity_id"), str) else None
    if data.get("dry_run"):
        verdict = {"allowed": WOULD_RUN, "confirm": WOULD_ASK}.get(str(data.get("verdict")), UNCHECKED)
        return PlannedCall(finished.call.name, finished.call.arguments, verdict, data.get("question"),
                           entity_id, data.get("service"), data.get("changes"))
    if finished.ok:  # a tool that only reads ran (get_state)
        return PlannedCall(finished.call.name, finished.call.arguments, READS, None, entity_id)
    code = str(data.get("error") or "tool_failed")
    message = data.get("message")
    return PlannedCall(finished.call.name, finished.call.arguments,
                       WOULD_ASK if code == CONFIRMATION_REQUIRED else code,
                       str(message) if message is not None else None, entity_id)


@dataclass
class _Kept:
    plan: TurnPlan
    request: TurnRequest  # the planning request: its client alone may run it, from its place and route
    expires: float
    ran: bool = False


class PlanBook:
    """The plans made in the last five minutes, each runnable once."""

    def __init__(self, ttl_s: float = PLAN_TTL_S, clock: Callable[[], float] = time.monotonic) -> None:
        self._ttl_s = ttl_s
        self._clock = clock
        self._kept: dict[str, _Kept] = {}

    @staticmethod
    def new_id() -> str:
        return uuid.uuid4().hex

    def keep(self, plan: TurnPlan, request: TurnRequest) -> None:
        now = self._clock()
        for plan_id in [k for k, v in self._kept.items() if now >= v.expires + self._ttl_s]:
            del self._kept[plan_id]  # long gone: its id now reads as unknown
        while len(self._kept) >= MAX_PLANS:
            del self._kept[next(iter(self._kept))]
        plan.expires_in_s = self._ttl_s
        self._kept[plan.plan_id] = _Kept(plan, request, now + self._ttl_s)

    def runnable(self, plan_id: str, client: str | None) -> tuple[TurnPlan, TurnRequest]:
        """The plan `client` may run now, and the request that made it (its client, route and
        place); PlanNotRunnable otherwise. Nothing is spent: `spend` marks it run."""
        kept = self._kept.get(plan_id)
        if kept is None:
            raise PlanNotRunnable("unknown_plan", f"No plan {plan_id!r}: POST /api/plan makes one.")
        if kept.request.client != client:
            raise PlanNotRunnable("plan_of_another_client", "This plan was made by another client; only the "
                                                            "client that made a plan may run it.")
        if kept.ran:
            raise PlanNotRunnable("plan_already_run", "This plan was run already; make a new one to run it again.")
        if self._clock() >= kept.expires:
            raise PlanNotRunnable("plan_expired", f"This plan expired ({round(self._ttl_s)} s after it was "
                                                  "made); make a new one.")
        return kept.plan, kept.request

    def spend(self, plan_id: str) -> None:
        """Mark a plan `runnable` gave as run: it never runs again."""
        self._kept[plan_id].ran = True


def as_call(planned: PlannedCall, number: int) -> ToolCall:
    """The planned call, to run."""
    return ToolCall(planned.name, dict(planned.arguments), id=f"plan_{number}")


def language_reading(used: str, given: str | None, preferred: str, candidates: list[str],
                     confidences: dict[str, float]) -> LanguageReading:
    """The reading, with the identifier's confidences rounded and the likeliest first."""
    ranked = sorted(confidences.items(), key=lambda item: -item[1])[:_SHOWN_LANGUAGES]
    return LanguageReading(used, given, preferred, list(candidates),
                           {language: round(share, 3) for language, share in ranked if share >= 0.01})


def plan_of(plan_id: str, state: TurnState, result: TurnResult, language: LanguageReading,
            match: Match | None) -> TurnPlan:
    """The plan a dry-run turn made: its path, intent and slots, its calls, what it weighed."""
    calls = [planned_call(f) for f in state.finished_calls if f.call.name != "invalid_tool_call"]
    direct = state.direct
    acts = any(c.verdict in RUNNABLE for c in calls)
    best = {e.entity_id for e in match.best} if match is not None else set()
    weighed = [WeighedEntity(e.entity_id, e.name, e.area, e.entity_id in best)
               for e in (match.candidates if match is not None else [])]
    request = state.request
    return TurnPlan(plan_id, state.text, state.persona.key, language, result.path,
                    direct.intent if direct is not None else None, list(direct.slots) if direct is not None else [],
                    calls, weighed, match.tier if match is not None else "",
                    None if acts or not result.reply else result.reply, list(result.withheld),
                    request.area, request.device_id, request.satellite_id)


async def run_plan_calls(registry: ToolRegistry, plan: TurnPlan, ctx: ToolContext, allowed: Collection[str],
                         observe: Callable[[ToolCall, ToolContext, ToolResult, float], None],
                         name_of: Callable[[str], str | None]) -> PlanRun:
    """The plan's calls that would act, each through the registry (validation and the policy
    decide again), and the reply said of their outcomes."""
    finished: list[ToolFinished] = []
    said: list[str] = []
    for number, planned in enumerate(plan.runnable):
        call = as_call(planned, number)
        started = time.monotonic()
        result = await registry.call(call, ctx, allowed=allowed)
        observe(call, ctx, result, started)
        finished.append(ToolFinished.of(call, result, time.monotonic() - started))
        said.append(speech_of(result, ctx.language, name_of))
    return PlanRun(plan.plan_id, ctx.language, finished, " ".join(dict.fromkeys(s for s in said if s)))
