"""`POST /api/plan` and `POST /api/plan/{id}/run` against a real hub (SmolLM2, the MQTT demo
home on the embedded broker): a plan acts on nothing and says why, a bad body is a clear 400 that
plans nothing, and a plan runs once."""

from __future__ import annotations

import http.client
import json
import time

import jsonschema
import pytest
import requests

from hub.interfaces.http import rest_schema
from interfaces.http.test_rest_api import BAD_ASK_BODIES, entity_state, kitchen_light, set_light  # noqa: F401 (fixture)

TIMEOUT = 240  # a model turn on two busy cores


def plan(live_hub, auth, **body):
    response = requests.post(f"{live_hub.url}/api/plan", headers=auth, json=body, timeout=TIMEOUT)
    assert response.status_code == 200, response.text
    jsonschema.validate(response.json(), rest_schema.PLAN)
    return response.json()


def run(live_hub, auth, plan_id: str) -> requests.Response:
    return requests.post(f"{live_hub.url}/api/plan/{plan_id}/run", headers=auth, timeout=60)


def test_a_plan_acts_on_nothing_and_running_it_does_what_it_showed(live_hub, auth, kitchen_light):
    set_light(live_hub, auth, kitchen_light, False)
    found = plan(live_hub, auth, text="turn on the kitchen light")
    assert found["path"] == "fast_path" and found["intent"] == "HassTurnOn"
    assert found["slots"] == [{"name": "kitchen light"}]
    assert [(c["name"], c["arguments"], c["verdict"], c["changes"]) for c in found["calls"]] == [
        ("turn_on", {"entity_id": kitchen_light}, "would_run", True)]
    assert found["weighed"][0] == {"entity_id": kitchen_light, "name": "Kitchen Light", "area": "Kitchen",
                                   "best": True}
    assert found["reply"] is None and found["runnable"] and found["expires_in_s"] == 300
    assert found["language"]["used"] == "en"
    time.sleep(0.5)
    assert entity_state(live_hub, auth, kitchen_light) == "off"
    assert live_hub.app.agent.conversations.ids() == []  # nothing kept

    response = run(live_hub, auth, found["plan_id"])
    assert response.status_code == 200, response.text
    jsonschema.validate(response.json(), rest_schema.PLAN_RUN)
    ran = response.json()
    assert ran["ok"] and [c["name"] for c in ran["tool_calls"]] == ["turn_on"]
    assert ran["reply"] == "Turned on Kitchen Light."
    assert entity_state(live_hub, auth, kitchen_light) == "on"
    again = run(live_hub, auth, found["plan_id"])
    assert again.status_code == 409 and again.json()["error"] == "plan_already_run"


def test_a_question_is_answered_in_the_plan_and_has_nothing_to_run(live_hub, auth):
    found = plan(live_hub, auth, text="is the front door locked?")
    assert found["path"] == "fast_path" and found["intent"] == "HassGetState"
    assert found["calls"] == [] and not found["runnable"]
    assert found["reply"].startswith("Yes.")
    ran = run(live_hub, auth, found["plan_id"]).json()
    assert ran["tool_calls"] == [] and ran["reply"] == ""


def test_the_policys_verdict_and_the_named_language(live_hub, auth):
    found = plan(live_hub, auth, text="Schließe die Front Door auf", language="de")
    assert found["language"]["used"] == "de" and found["language"]["given"] == "de"
    [held] = found["calls"]
    assert held["verdict"] == "would_ask" and held["service"] == "unlock"
    assert held["message"] == "Soll ich Front Door wirklich aufschließen?"
    assert not live_hub.app.policy._pending  # asked nothing of anyone


def test_the_model_path_runs_the_model(live_hub, auth):
    found = plan(live_hub, auth, text="Tell me a joke about cats.", language="en")
    assert found["path"] == "model" and found["intent"] is None and found["calls"] == []
    assert found["reply"]  # what the stand-in would say


@pytest.mark.parametrize("body,code", [
    *BAD_ASK_BODIES,
    (b'{"text": "hi", "area": ""}', "invalid_body"),
    (b'{"text": "hi", "area": 5}', "invalid_body"),
    (b'{"text": "hi", "device_id": "' + b"x" * 300 + b'"}', "invalid_body"),
])
def test_bad_plan_bodies_get_a_clear_400_and_plan_nothing(live_hub, auth, body, code):
    kept = len(live_hub.app.agent._planner._plans._kept)
    response = requests.post(f"{live_hub.url}/api/plan", data=body, timeout=30,
                             headers={**auth, "Content-Type": "application/json"})
    assert response.status_code in (400, 413), response.text
    error = response.json()
    assert error["error"] == code and error["message"]
    assert len(live_hub.app.agent._planner._plans._kept) == kept


def test_unknown_persona_and_unknown_plan(live_hub, auth):
    response = requests.post(f"{live_hub.url}/api/plan", headers=auth, json={"text": "hi", "persona": "nobody"},
                             timeout=30)
    assert response.status_code == 404 and response.json()["error"] == "unknown_persona"
    response = run(live_hub, auth, "0123abcd")
    assert response.status_code == 404 and response.json()["error"] == "unknown_plan"
    found = plan(live_hub, auth, text="turn off the kitchen light")
    response = requests.post(f"{live_hub.url}/api/plan/{found['plan_id']}/run", headers=auth,
                             data=json.dumps({"plan": 1}), timeout=30)
    assert response.status_code == 400 and response.json()["error"] == "invalid_body"
    assert run(live_hub, auth, found["plan_id"]).status_code == 200  # a refused run spent nothing


def test_only_the_client_that_made_a_plan_runs_it(live_hub, auth, kitchen_light):
    """The same token from another address is another client: refused (403), the plan kept."""
    set_light(live_hub, auth, kitchen_light, False)
    found = plan(live_hub, auth, text="turn on the kitchen light")
    port = int(live_hub.url.rsplit(":", 1)[1])
    other = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=("127.0.0.2", 0))
    other.request("POST", f"/api/plan/{found['plan_id']}/run", headers=auth)
    refused = other.getresponse()
    assert refused.status == 403 and json.loads(refused.read())["error"] == "plan_of_another_client"
    assert entity_state(live_hub, auth, kitchen_light) == "off"
    assert run(live_hub, auth, found["plan_id"]).status_code == 200
    assert entity_state(live_hub, auth, kitchen_light) == "on"


@pytest.mark.parametrize("path", ["/api/plan", "/api/plan/abc/run"])
def test_plans_need_the_token(live_hub, path):
    response = requests.post(live_hub.url + path, json={"text": "turn on the kitchen light"}, timeout=10)
    assert response.status_code == 401
