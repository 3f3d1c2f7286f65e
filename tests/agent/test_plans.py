"""The plan book's five minutes and single run, and the policy's verdict asked without acting."""

from __future__ import annotations

import pytest

from hub.agent.plans import LanguageReading, PlanBook, PlanNotRunnable, TurnPlan
from hub.core.messages import ToolCall
from hub.core.tools import ToolContext, ToolError
from hub.home.entities import Entity
from hub.home.policy import ActionPolicy


def a_plan(plan_id: str) -> TurnPlan:
    return TurnPlan(plan_id, "turn on the lamp", "home", LanguageReading("en", None, "en", ["en"], {}), "fast_path",
                    "HassTurnOn", [], [], [], "", None, [], None, None)


def test_a_plan_runs_once_within_five_minutes() -> None:
    now = [100.0]
    book = PlanBook(clock=lambda: now[0])
    book.keep(a_plan("a"), "rest")
    book.keep(a_plan("b"), "rest")
    assert book.take("a")[1] == "rest"
    with pytest.raises(PlanNotRunnable) as again:
        book.take("a")
    assert again.value.code == "plan_already_run"
    now[0] += 300.0
    with pytest.raises(PlanNotRunnable) as late:
        book.take("b")
    assert late.value.code == "plan_expired"
    with pytest.raises(PlanNotRunnable) as unknown:
        book.take("c")
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
