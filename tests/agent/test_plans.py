"""The plan book's five minutes and single run, and the policy's verdict asked without acting."""

from __future__ import annotations

import pytest

from hub.agent.plans import LanguageReading, PlanBook, PlanNotRunnable, TurnPlan
from hub.agent.types import TurnRequest
from hub.core.messages import ToolCall
from hub.core.tools import ToolContext, ToolError
from hub.home.entities import Entity
from hub.home.policy import ActionPolicy


def a_plan(plan_id: str) -> TurnPlan:
    return TurnPlan(plan_id, "turn on the lamp", "home", LanguageReading("en", None, "en", ["en"], {}), "fast_path",
                    "HassTurnOn", [], [], [], "", None, [], None, None)


def test_a_plan_runs_once_within_five_minutes_for_its_client_alone() -> None:
    now = [100.0]
    book = PlanBook(clock=lambda: now[0])
    asked = TurnRequest("turn on the lamp", source="rest", client="rest:token:ab@10.0.0.2", satellite_id="sat")
    book.keep(a_plan("a"), asked)
    book.keep(a_plan("b"), asked)
    with pytest.raises(PlanNotRunnable) as stranger:
        book.runnable("a", "rest:token:ab@10.0.0.3")
    assert stranger.value.code == "plan_of_another_client"
    plan, request = book.runnable("a", asked.client)  # the stranger spent nothing
    assert plan.plan_id == "a" and request is asked
    book.spend("a")
    with pytest.raises(PlanNotRunnable) as again:
        book.runnable("a", asked.client)
    assert again.value.code == "plan_already_run"
    now[0] += 300.0
    with pytest.raises(PlanNotRunnable) as late:
        book.runnable("b", asked.client)
    assert late.value.code == "plan_expired"
    with pytest.raises(PlanNotRunnable) as unknown:
        book.runnable("c", asked.client)
    assert unknown.value.code == "unknown_plan"


def test_the_verdict_holds_nothing_and_counts_nothing() -> None:
    policy = ActionPolicy(confirm_seconds=30, rate_limit_per_minute=1, read_only_entities="light.hall")
    lock = Entity("lock.front", "Front door")
    lamp = Entity("light.desk", "Desk lamp")
    assert policy.verdict(lock, "unlock") == "confirm" and policy.verdict(lock, "lock") == "allowed"
    assert policy.verdict(Entity("light.hall", "Hall"), "turn_on") == "not_allowed"
    assert policy.verdict(Entity("camera.door", "Door camera"), "turn_on") == "not_allowed"
    assert policy.verdict(lamp, "turn_on") == "allowed"
    assert not policy.has_pending("c1")
    ctx = ToolContext("c1")
    policy.check(lamp, "turn_on", ToolCall("turn_on", {"entity_id": "light.desk"}), ctx)
    policy.record(lamp, "turn_on", {}, ctx, "ok")
    assert policy.verdict(lamp, "turn_on") == "rate_limited"  # the real call counted, the verdicts did not
    with pytest.raises(ToolError) as refused:
        policy.check(lamp, "turn_on", ToolCall("turn_on", {"entity_id": "light.desk"}), ctx)
    assert refused.value.code == "rate_limited"
