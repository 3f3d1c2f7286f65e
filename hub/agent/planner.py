"""Making and running plans (hub.agent.plans) for the agent: a request's turn run in a dry run on
a throwaway conversation, and later, once, that plan's calls run for real."""

from __future__ import annotations

import asyncio
import dataclasses
import time
import uuid
from typing import Awaitable, Callable

from hub.agent.activity import AgentActivity
from hub.agent.conversation import Conversation
from hub.agent.intake import Reception
from hub.agent.personas import Persona, PersonaBook
from hub.agent.plans import PlanBook, PlanRun, TurnPlan, language_reading, plan_of, run_plan_calls
from hub.agent.ports import ConfirmationsLike, HomeView, LanguageIdentifier
from hub.agent.turn import TurnState, ended, failure
from hub.agent.types import TurnRequest, TurnResult, request_problem, without_format_characters
from hub.core.tools import ToolContext, ToolRegistry

# the agent's: a turn's tool context (request, conversation id, language, persona, dry run), and
# its routes with the history fitted to the model
ContextFor = Callable[[TurnRequest, str, str, Persona, bool], ToolContext]
Routes = Callable[[TurnState], Callable[[], Awaitable[TurnResult]]]


class Planner:
    def __init__(self, *, reception: Reception, context_for: ContextFor, routes: Routes,
                 registry: ToolRegistry, personas: Callable[[], PersonaBook], activity: AgentActivity,
                 identify: LanguageIdentifier, home: HomeView | None, confirmations: ConfirmationsLike | None,
                 turn_timeout: float) -> None:
        self._reception = reception
        self._context_for = context_for
        self._routes = routes
        self._registry = registry
        self._personas = personas
        self._activity = activity
        self._identify = identify
        self._home = home
        self._confirmations = confirmations
        self._turn_timeout = turn_timeout
        self._plans = PlanBook()  # plans made without acting, runnable once for five minutes

    async def plan(self, request: TurnRequest) -> TurnPlan:
        """What the hub would do with `request`, acting on nothing: its routes and model run on a
        throwaway conversation in a dry run; the plan is kept for `run_plan`. Raises
        UnknownPersona, ValueError for a text that cannot be a turn."""
        request = dataclasses.replace(request, text=without_format_characters(request.text))
        problem = request_problem(request.text)
        if problem:
            raise ValueError(problem)
        known = self._reception.known(request)
        persona = self._reception.persona_for(request, known)
        languages = await self._reception.languages(request, persona, known)
        conversation = Conversation(f"plan-{uuid.uuid4().hex[:12]}", languages[0],
                                    list(known.messages) if known is not None else [], persona.key)
        ctx = self._context_for(request, conversation.id, languages[0], persona, True)
        state = TurnState(request, conversation, languages[0], ctx, persona, time.monotonic() + self._turn_timeout,
                          lambda _: None, languages)
        try:
            result = await asyncio.wait_for(ended(state, self._routes(state)), self._turn_timeout)
        except TimeoutError:
            result = failure(conversation.id, state.language, "timeout")
        reading = language_reading(state.language, request.language, self._reception.preferred(persona, known),
                                   languages, self._identify.confidences(state.text))
        match = self._home.match(state.text, state.language) if self._home is not None and persona.home else None
        plan = plan_of(self._plans.new_id(), state, result, reading, match)
        self._plans.keep(plan, request)
        return plan

    async def run_plan(self, plan_id: str, client: str | None = None) -> PlanRun:
        """Run the calls of a plan `client` made in the last five minutes, once, on a throwaway
        conversation, as a turn of the planning request (its route, satellite, device and
        speaker's place): validation and the policy decide again (a call it holds for a yes is
        dropped: nobody can answer it there). Raises PlanNotRunnable, UnknownPersona (neither
        spends the plan)."""
        plan, request = self._plans.runnable(plan_id, client)
        personas = self._personas()
        persona = personas.get(plan.persona)
        self._plans.spend(plan_id)
        ctx = self._context_for(request, f"plan-{uuid.uuid4().hex[:12]}", plan.language.used, persona, False)
        name_of = self._home.name_of if self._home is not None else (lambda _: None)
        run = await run_plan_calls(self._registry, plan, ctx, personas.tool_names(persona),
                                   self._activity.tool_called, name_of)
        if self._confirmations is not None:
            self._confirmations.forget(ctx.conversation_id)
        return run
