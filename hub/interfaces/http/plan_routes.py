"""The REST routes of plans: `POST /api/plan` answers what the hub would do with a request
(the body of `/api/ask`, plus the speaker's area or device) without acting, and
`POST /api/plan/{plan_id}/run` runs that plan's calls once, within five minutes."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from aiohttp import web

from hub.agent.personas import UnknownPersona
from hub.agent.plans import PlanNotRunnable, PlanRun, TurnPlan
from hub.interfaces.http.agent_routes import AgentHost, running_agent
from hub.interfaces.http.errors import ClientError
from hub.interfaces.http.openai_routes import BodyReader
from hub.interfaces.http.turn_json import tool_finished_json, turn_request

# Why a plan cannot run, as an HTTP status.
_NOT_RUNNABLE_STATUS = {"unknown_plan": 404, "plan_of_another_client": 403, "plan_already_run": 409,
                        "plan_expired": 410}


def plan_json(plan: TurnPlan) -> dict[str, Any]:
    return {**dataclasses.asdict(plan), "runnable": bool(plan.runnable)}


def plan_run_json(run: PlanRun) -> dict[str, Any]:
    return {"plan_id": run.plan_id, "language": run.language, "reply": run.reply,
            "ok": all(f.ok for f in run.calls), "tool_calls": [tool_finished_json(f) for f in run.calls]}


class PlanRoutes:
    def __init__(self, hub: AgentHost, read_body: BodyReader, client_of: Callable[[web.Request], str | None],
                 reasoning_budget: Callable[[], int]) -> None:
        self._hub = hub
        self._read_body = read_body
        self._client_of = client_of
        self._reasoning_budget = reasoning_budget

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/api/plan", self._plan)
        app.router.add_post("/api/plan/{plan_id}/run", self._run)

    async def _plan(self, request: web.Request) -> web.Response:
        body = await self._read_body(request, "plan")
        turn = turn_request(body, self._client_of(request), self._reasoning_budget())
        try:
            plan = await running_agent(self._hub).plan(turn)
        except UnknownPersona as err:
            raise ClientError(404, "unknown_persona", f"{err}; GET /api/personas lists them.") from None
        except ValueError as err:
            raise ClientError(400, "invalid_body", f"text: {err}") from None
        return web.json_response(plan_json(plan))

    async def _run(self, request: web.Request) -> web.Response:
        if (await request.read()).strip():
            raise ClientError(400, "invalid_body", "Running a plan takes no body: the plan says what to do.")
        try:
            run = await running_agent(self._hub).run_plan(request.match_info["plan_id"], self._client_of(request))
        except PlanNotRunnable as err:
            raise ClientError(_NOT_RUNNABLE_STATUS[err.code], err.code, str(err)) from None
        except UnknownPersona as err:
            raise ClientError(409, "unknown_persona", f"{err}: the plan's persona is gone.") from None
        return web.json_response(plan_run_json(run))
