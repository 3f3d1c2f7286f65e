"""The REST API against a real hub: SmolLM2 through llama-cpp-python, the demo home, the real
tool registry and agent. Tiny-model answers are not judged, only the mechanisms."""

from __future__ import annotations

import json
import time
from typing import Any, Iterator

import jsonschema
import pytest
import requests
from openapi_spec_validator import validate as validate_openapi

from hub.interfaces.http import rest_schema
from hub.llm.inspect import inspect_gguf

TIMEOUT = 240  # a model turn on two busy cores


def sse_events(response: requests.Response) -> Iterator[tuple[str, Any]]:
    """(event name, JSON data) of a text/event-stream response, in order."""
    name, data = "message", []
    for line in response.iter_lines(decode_unicode=True):
        if line == "":
            if data:
                payload = "\n".join(data)
                yield name, (payload if payload == "[DONE]" else json.loads(payload))
            name, data = "message", []
        elif line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())


def entity_state(live_hub, auth, entity_id: str) -> str:
    entities = requests.get(f"{live_hub.url}/api/entities", headers=auth, timeout=10).json()
    return next(e["state"] for e in entities if e["entity_id"] == entity_id)


@pytest.fixture
def kitchen_light(live_hub, auth) -> str:
    """The demo home's kitchen light, whichever demo home (MQTT or in-memory) the hub runs."""
    entities = requests.get(f"{live_hub.url}/api/entities", params={"domain": "light"}, headers=auth,
                            timeout=10).json()
    return next(e["entity_id"] for e in entities if (e["area"] or "").lower() == "kitchen")


def set_light(live_hub, auth, entity_id: str, on: bool) -> None:
    tool = "turn_on" if on else "turn_off"
    response = requests.post(f"{live_hub.url}/api/tools/{tool}", headers=auth, timeout=30,
                             json={"arguments": {"entity_id": entity_id}})
    assert response.status_code == 200 and response.json()["ok"], response.text
    assert entity_state(live_hub, auth, entity_id) == ("on" if on else "off")


def turn_count(live_hub) -> int:
    from hub.interfaces.http.metrics import METRICS

    text = METRICS.render()
    return sum(int(float(line.rsplit(" ", 1)[1])) for line in text.splitlines()
               if line.startswith("bolt_hub_turns_total{"))


# --- access ------------------------------------------------------------------------------------


def test_health_needs_no_token(live_hub):
    deadline = time.monotonic() + 120  # "warming" until the stable prompt is primed
    while (response := requests.get(f"{live_hub.url}/health", timeout=10)).json()["status"] != "ok":
        assert response.status_code == 200 and response.json()["status"] == "warming"
        assert time.monotonic() < deadline, response.json()
        time.sleep(0.3)
    assert response.json()["startup"]["stage"] == "ready"


@pytest.mark.parametrize("method,path", [
    ("GET", "/api/status"), ("GET", "/api/entities"), ("GET", "/api/tools"), ("GET", "/api/settings"),
    ("PUT", "/api/settings"), ("POST", "/api/ask"), ("POST", "/api/tools/turn_on"), ("GET", "/metrics"),
    ("GET", "/api/openapi.json"), ("GET", "/v1/models"), ("POST", "/v1/chat/completions"),
    ("GET", "/api/conversations/abc"), ("GET", "/api/memory"),
])
@pytest.mark.parametrize("header", [None, "Bearer wrong-token", "Basic dGVzdA==", "Bearer "])
def test_every_api_route_needs_the_token(live_hub, method, path, header):
    headers = {"Authorization": header} if header else {}
    response = requests.request(method, live_hub.url + path, headers=headers, timeout=10,
                                json={"text": "turn on the kitchen light"})
    assert response.status_code == 401
    error = response.json()["error"]
    if path.startswith("/v1/"):  # OpenAI's shape on its routes
        assert error["code"] == "unauthorized" and error["type"] == "authentication_error" and error["message"]
    else:
        assert error == "unauthorized"
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


def test_light_stays_off_when_unauthorized(live_hub, auth, kitchen_light):
    set_light(live_hub, auth, kitchen_light, on=False)
    requests.post(f"{live_hub.url}/api/tools/turn_on", json={"arguments": {"entity_id": kitchen_light}},
                  headers={"Authorization": "Bearer nope"}, timeout=10)
    requests.post(f"{live_hub.url}/api/ask", json={"text": "turn on the kitchen light"}, timeout=10)
    assert entity_state(live_hub, auth, kitchen_light) == "off"


def test_page_and_assets_load_without_token(live_hub):
    page = requests.get(f"{live_hub.url}/", timeout=10)
    assert page.status_code == 200 and "text/html" in page.headers["Content-Type"]
    assert '<base href="/">' in page.text
    for asset, kind in (("app.js", "javascript"), ("style.css", "text/css")):
        response = requests.get(f"{live_hub.url}/{asset}", timeout=10)
        assert response.status_code == 200 and kind in response.headers["Content-Type"]


def test_ingress_header_from_elsewhere_is_not_trusted(live_hub):
    # only the Supervisor's address (inside the add-on) may skip the token
    response = requests.get(f"{live_hub.url}/api/status", headers={"X-Ingress-Path": "/api/hassio_ingress/x"},
                            timeout=10)
    assert response.status_code == 401


def test_page_base_follows_ingress_path(live_hub):
    page = requests.get(f"{live_hub.url}/", headers={"X-Ingress-Path": "/api/hassio_ingress/abc-123"}, timeout=10)
    assert '<base href="/api/hassio_ingress/abc-123/">' in page.text
    hostile = requests.get(f"{live_hub.url}/", headers={"X-Ingress-Path": '/x"><script>alert(1)</script>'},
                           timeout=10)
    assert "<script>alert" not in hostile.text and '<base href="/">' in hostile.text


# --- asking --------------------------------------------------------------------------------------


def test_ask_json_runs_the_command(live_hub, auth, kitchen_light):
    set_light(live_hub, auth, kitchen_light, on=False)
    response = requests.post(f"{live_hub.url}/api/ask", json={"text": "turn on the kitchen light"},
                             headers=auth, timeout=TIMEOUT)
    assert response.status_code == 200
    result = response.json()
    jsonschema.validate(result, rest_schema.ASK_RESULT)
    assert result["ok"] and result["reply"]
    assert [(c["name"], c["arguments"]) for c in result["tool_calls"]] == [("turn_on", {"entity_id": kitchen_light})]
    assert result["intent"] == "HassTurnOn" and result["tool_calls"][0]["changed_entities"] == [kitchen_light]
    assert entity_state(live_hub, auth, kitchen_light) == "on"


def test_ask_streams_tool_and_text_events_before_done(live_hub, auth, kitchen_light):
    set_light(live_hub, auth, kitchen_light, on=False)
    with requests.post(f"{live_hub.url}/api/ask", json={"text": "turn on the kitchen light"}, stream=True,
                       headers={**auth, "Accept": "text/event-stream"}, timeout=TIMEOUT) as response:
        assert response.status_code == 200
        assert response.headers["Content-Type"].startswith("text/event-stream")
        events = list(sse_events(response))
    names = [name for name, _ in events]
    assert names[-1] == "done" and names.count("done") == 1
    assert {"tool_started", "tool_finished", "chunk"} <= set(names[:-1])
    assert names.index("tool_started") < names.index("tool_finished")
    done = events[-1][1]
    jsonschema.validate(done, rest_schema.ASK_RESULT)
    streamed = "".join(data["text"] for name, data in events if name == "chunk")
    assert streamed.strip() == done["reply"].strip()
    finished = next(data for name, data in events if name == "tool_finished")
    assert finished["name"] == "turn_on" and finished["ok"] and finished["result"]["state"] == "on"
    assert entity_state(live_hub, auth, kitchen_light) == "on"


def test_model_turn_streams_and_keeps_history(live_hub, auth):
    with requests.post(f"{live_hub.url}/api/ask", stream=True, timeout=TIMEOUT,
                       json={"text": "Tell me a joke about France.", "conversation_id": "rest-history-1",
                             "language": "en", "reasoning": "off"},
                       headers={**auth, "Accept": "text/event-stream"}) as response:
        events = list(sse_events(response))
    names = [name for name, _ in events]
    done = events[-1][1]
    assert names[-1] == "done", names
    assert done["ok"], done
    assert done["path"] == "model" and done["conversation_id"] == "rest-history-1"
    assert "chunk" in names[:-1]
    timings = done["timings"]
    assert timings["prompt_tokens"] > 0 and timings["completion_tokens"] > 0
    assert 0 < timings["first_token_s"] <= timings["total_s"]

    history = requests.get(f"{live_hub.url}/api/conversations/rest-history-1", headers=auth, timeout=10)
    assert history.status_code == 200
    messages = history.json()["messages"]
    assert messages[0] == {"role": "user", "content": messages[0]["content"], "name": None, "tool_calls": []}
    assert "joke about France" in messages[0]["content"]
    assert messages[-1]["role"] == "assistant"

    metrics = requests.get(f"{live_hub.url}/metrics", headers=auth, timeout=10).text
    assert 'bolt_hub_turns_total{path="model",source="rest",status="ok"}' in metrics
    assert 'bolt_hub_turn_stage_seconds_count{path="model",stage="prefill"}' in metrics
    assert "bolt_hub_model_info{" in metrics


def test_a_held_action_says_it_awaits_a_yes_and_the_yes_streams_done(live_hub, auth):
    """`awaiting` (issue 41): a voice client listens again when the reply waits for an answer."""
    lock = next(e["entity_id"] for e in requests.get(f"{live_hub.url}/api/entities", params={"domain": "lock"},
                                                     headers=auth, timeout=10).json())
    asked = requests.post(f"{live_hub.url}/api/ask", headers=auth, timeout=TIMEOUT,
                          json={"text": "unlock the front door", "conversation_id": "rest-awaiting-1",
                                "floor": "Ground floor", "extra_system_prompt": "The user is at the door."}).json()
    jsonschema.validate(asked, rest_schema.ASK_RESULT)
    assert asked["awaiting"] == "confirmation" and asked["ok"], asked
    assert entity_state(live_hub, auth, lock) == "locked"
    with requests.post(f"{live_hub.url}/api/ask", json={"text": "yes", "conversation_id": "rest-awaiting-1"},
                       stream=True, headers={**auth, "Accept": "text/event-stream"}, timeout=TIMEOUT) as response:
        events = list(sse_events(response))
    name, done = events[-1]
    assert name == "done" and done["awaiting"] is None and done["path"] == "confirmation", done
    assert entity_state(live_hub, auth, lock) == "unlocked"
    relocked = requests.post(f"{live_hub.url}/api/tools/turn_on", json={"arguments": {"entity_id": lock}},
                             headers=auth, timeout=30)
    assert relocked.status_code == 200 and entity_state(live_hub, auth, lock) == "locked", relocked.text


def test_unknown_conversation_is_404(live_hub, auth):
    response = requests.get(f"{live_hub.url}/api/conversations/never-seen", headers=auth, timeout=10)
    assert response.status_code == 404 and response.json()["error"] == "unknown_conversation"


# --- bad input -----------------------------------------------------------------------------------

BAD_ASK_BODIES = [
    (b"turn on the light", "invalid_json"),
    (b"", "invalid_body"),
    (b"{", "invalid_json"),
    (b'{"text": NaN}', "invalid_json"),
    (b"[]", "invalid_body"),
    (b'"turn on"', "invalid_body"),
    (b"{}", "invalid_body"),
    (b'{"text": 5}', "invalid_body"),
    (b'{"text": ""}', "invalid_body"),
    (b'{"text": "   "}', "invalid_body"),
    (b'{"text": "hi", "unknown": 1}', "invalid_body"),
    (b'{"text": "hi", "conversational": "yes"}', "invalid_body"),
    (b'{"text": "hi", "reasoning": "maybe"}', "invalid_body"),
    (b'{"text": "hi", "reasoning": {"mode": "budget", "budget": -1}}', "invalid_body"),
    (b'{"text": "hi", "conversation_id": "a b/c"}', "invalid_body"),
    (b'{"text": "hi", "conversation_id": "abc\\n"}', "invalid_body"),
    (b'{"text": "hi", "language": "en\\n"}', "invalid_body"),
    (b'{"text": "hi", "language": 7}', "invalid_body"),
    (json.dumps({"text": "x" * 4001}).encode(), "invalid_body"),
    (json.dumps({"text": "hi", "extra_system_prompt": "x" * 4001}).encode(), "invalid_body"),
    (b'{"text": "hi", "floor": ""}', "invalid_body"),
    (b"\xff\xfe\x00garbage", "invalid_json"),
    (b"[" * 100_000 + b"]" * 100_000, "invalid_json"),
]


@pytest.mark.parametrize("body,code", BAD_ASK_BODIES)
def test_bad_ask_bodies_get_a_clear_400_and_run_nothing(live_hub, auth, body, code):
    before = turn_count(live_hub)
    response = requests.post(f"{live_hub.url}/api/ask", data=body, timeout=30,
                             headers={**auth, "Content-Type": "application/json"})
    assert response.status_code in (400, 413), response.text
    error = response.json()
    assert error["error"] == code and error["message"]
    assert turn_count(live_hub) == before


def test_huge_body_is_413_json(live_hub, auth):
    body = json.dumps({"text": "a" * (rest_schema.MAX_BODY_BYTES + 10)})
    response = requests.post(f"{live_hub.url}/api/ask", data=body, headers=auth, timeout=30)
    assert response.status_code == 413
    assert response.json()["error"] == "body_too_large"


def test_unknown_route_and_wrong_method_are_json(live_hub, auth):
    missing = requests.get(f"{live_hub.url}/api/nothing-here", headers=auth, timeout=10)
    assert missing.status_code == 404 and missing.json()["error"] == "not_found"
    wrong = requests.delete(f"{live_hub.url}/api/ask", headers=auth, timeout=10)
    assert wrong.status_code == 405 and "POST" in wrong.headers["Allow"]


# --- home, tools, settings -----------------------------------------------------------------------


def test_entities_and_domain_filter(live_hub, auth, kitchen_light):
    entities = requests.get(f"{live_hub.url}/api/entities", headers=auth, timeout=10).json()
    jsonschema.validate(entities, {"type": "array", "items": rest_schema.ENTITY})
    assert kitchen_light in {e["entity_id"] for e in entities}
    lights = requests.get(f"{live_hub.url}/api/entities", params={"domain": "light"}, headers=auth, timeout=10).json()
    assert lights and {e["domain"] for e in lights} == {"light"}
    for domain in ("li ght;", "Light", "light\n", "lïght"):
        bad = requests.get(f"{live_hub.url}/api/entities", params={"domain": domain}, headers=auth, timeout=10)
        assert bad.status_code == 400, domain


def test_tools_listing(live_hub, auth):
    tools = requests.get(f"{live_hub.url}/api/tools", headers=auth, timeout=10).json()
    by_name = {t["name"]: t for t in tools}
    assert {"turn_on", "turn_off", "get_state"} <= set(by_name)
    for tool in tools:
        jsonschema.Draft202012Validator.check_schema(tool["parameters"])
        assert tool["description"]


def test_run_tool_directly(live_hub, auth, kitchen_light):
    set_light(live_hub, auth, kitchen_light, on=False)
    response = requests.post(f"{live_hub.url}/api/tools/turn_on", headers=auth, timeout=30,
                             json={"arguments": {"entity_id": kitchen_light}, "language": "de"})
    assert response.status_code == 200
    result = response.json()
    jsonschema.validate(result, rest_schema.TOOL_RUN_RESULT)
    assert result["ok"] and result["result"]["state"] == "on"
    assert entity_state(live_hub, auth, kitchen_light) == "on"


@pytest.mark.parametrize("tool,body,status,code", [
    ("turn_on", {"arguments": {}}, 400, "invalid_arguments"),
    ("turn_on", {"arguments": {"entity_id": 12}}, 400, "invalid_arguments"),
    ("turn_on", {"arguments": {"entity_id": "KITCHEN", "evil": True}}, 400, "invalid_arguments"),
    ("turn_on", {"arguments": "KITCHEN"}, 400, "invalid_body"),
    ("no_such_tool", {"arguments": {}}, 404, "unknown_tool"),
])
def test_run_tool_rejects_bad_calls_and_changes_nothing(live_hub, auth, kitchen_light, tool, body, status, code):
    set_light(live_hub, auth, kitchen_light, on=False)
    body = json.loads(json.dumps(body).replace("KITCHEN", kitchen_light))
    response = requests.post(f"{live_hub.url}/api/tools/{tool}", json=body, headers=auth, timeout=30)
    assert response.status_code == status, response.text
    assert response.json()["error"] == code
    assert entity_state(live_hub, auth, kitchen_light) == "off"


def test_direct_tool_calls_pass_the_policy(live_hub, auth):
    """Sensitive actions need a spoken yes even from the API: nothing happens, the state stays."""
    locks = requests.get(f"{live_hub.url}/api/entities", params={"domain": "lock"}, headers=auth, timeout=10).json()
    lock = next(e for e in locks if e["state"] == "locked")
    response = requests.post(f"{live_hub.url}/api/tools/turn_off", headers=auth, timeout=30,
                             json={"arguments": {"entity_id": lock["entity_id"]}})
    assert response.status_code == 200
    assert response.json()["ok"] is False and response.json()["result"]["error"] == "confirmation_required"
    assert entity_state(live_hub, auth, lock["entity_id"]) == "locked"


def test_run_tool_on_unknown_entity_reports_failure(live_hub, auth):
    response = requests.post(f"{live_hub.url}/api/tools/turn_on", headers=auth, timeout=30,
                             json={"arguments": {"entity_id": "light.nowhere"}})
    assert response.status_code == 200
    assert response.json()["ok"] is False and response.json()["result"]["error"]


def test_settings_roundtrip_and_all_or_nothing(live_hub, auth):
    url = f"{live_hub.url}/api/settings"
    before = requests.get(url, headers=auth, timeout=10).json()
    jsonschema.validate(before, rest_schema.SETTINGS)
    changed = requests.put(url, json={"reasoning": "budget", "reasoning_budget": 64}, headers=auth, timeout=10)
    assert changed.status_code == 200
    assert changed.json()["reasoning"] == "budget" and changed.json()["reasoning_budget"] == 64
    assert requests.get(url, headers=auth, timeout=10).json() == changed.json()
    # one bad value: nothing changes
    rejected = requests.put(url, json={"conversational_mode": not before["conversational_mode"],
                                       "reasoning_budget": 99999}, headers=auth, timeout=10)
    assert rejected.status_code == 400 and rejected.json()["error"] == "invalid_body"
    for body in ({"reasoning": "maybe"}, {"unknown": 1}, {}, {"conversational_mode": "sometimes"}):
        assert requests.put(url, json=body, headers=auth, timeout=10).status_code == 400
    assert requests.get(url, headers=auth, timeout=10).json() == changed.json()
    restored = requests.put(url, json=before, headers=auth, timeout=10)
    assert restored.json() == before


# --- OpenAI-compatible ---------------------------------------------------------------------------


def test_models_list(live_hub, auth):
    models = requests.get(f"{live_hub.url}/v1/models", headers=auth, timeout=10).json()
    assert models["object"] == "list" and models["data"][0]["id"]


def test_chat_completion(live_hub, auth):
    response = requests.post(f"{live_hub.url}/v1/chat/completions", headers=auth, timeout=TIMEOUT, json={
        "model": "anything", "max_tokens": 12,
        "messages": [{"role": "system", "content": "You are brief."},
                     {"role": "user", "content": [{"type": "text", "text": "Say hello."}]}]})
    assert response.status_code == 200, response.text
    completion = response.json()
    assert completion["object"] == "chat.completion"
    choice = completion["choices"][0]
    assert choice["message"]["role"] == "assistant" and choice["message"]["content"]
    assert choice["finish_reason"] in ("stop", "length")
    assert 0 < completion["usage"]["completion_tokens"] <= 12


def test_chat_completion_streams_chunks(live_hub, auth):
    with requests.post(f"{live_hub.url}/v1/chat/completions", headers=auth, timeout=TIMEOUT, stream=True, json={
        "messages": [{"role": "user", "content": "Count to three."}], "max_tokens": 10,
        "stream": True, "stream_options": {"include_usage": True}}) as response:
        assert response.status_code == 200
        events = [data for _, data in sse_events(response)]
    assert events[-1] == "[DONE]"
    chunks = events[:-1]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert len({c["id"] for c in chunks}) == 1
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert text
    finishing = [c for c in chunks if c["choices"] and c["choices"][0]["finish_reason"]]
    assert len(finishing) == 1 and finishing[0]["choices"][0]["finish_reason"] in ("stop", "length")
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] > 0


WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "Current weather for a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 20}},
                   "required": ["city"]}}}


@pytest.mark.parametrize("stream", [False, True])
def test_chat_tool_calls_come_back_unexecuted(live_hub, auth, stream):
    body = {"messages": [{"role": "user", "content": "What is the weather in Paris?"}],
            "tools": [WEATHER_TOOL], "tool_choice": "required", "max_tokens": 40, "stream": stream}
    with requests.post(f"{live_hub.url}/v1/chat/completions", headers=auth, json=body, timeout=TIMEOUT,
                       stream=stream) as response:
        assert response.status_code == 200, response.text
        if stream:
            chunks = [d for _, d in sse_events(response) if d != "[DONE]"]
            calls = [c for chunk in chunks for c in chunk["choices"][0]["delta"].get("tool_calls", [])]
            finish = chunks[-1]["choices"][0]["finish_reason"]
        else:
            choice = response.json()["choices"][0]
            calls, finish = choice["message"]["tool_calls"], choice["finish_reason"]
    assert finish == "tool_calls"
    assert len(calls) == 1 and calls[0]["type"] == "function" and calls[0]["id"]
    assert calls[0]["function"]["name"] == "get_weather"
    assert isinstance(json.loads(calls[0]["function"]["arguments"])["city"], str)


def test_chat_follow_up_with_tool_result(live_hub, auth):
    body = {"max_tokens": 16, "tools": [WEATHER_TOOL], "messages": [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": '{"temperature_c": 21, "sky": "sunny"}'}]}
    response = requests.post(f"{live_hub.url}/v1/chat/completions", headers=auth, json=body, timeout=TIMEOUT)
    assert response.status_code == 200, response.text
    assert response.json()["choices"][0]["message"]["role"] == "assistant"


@pytest.mark.parametrize("body", [
    {"messages": []},
    {"messages": [{"role": "wizard", "content": "hi"}]},
    {"messages": [{"role": "user", "content": "hi"}], "temperature": "hot"},
    {"messages": [{"role": "user", "content": "hi"}], "tool_choice": "required"},
    {"messages": [{"role": "user", "content": "hi"}], "tools": [WEATHER_TOOL],
     "tool_choice": {"type": "function", "function": {"name": "other"}}},
    {"messages": [{"role": "tool", "content": "{}", "tool_call_id": "nobody"}]},
    {"messages": [{"role": "assistant", "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{not json"}}]}]},
    {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]},
])
def test_chat_rejects_bad_requests(live_hub, auth, body):
    response = requests.post(f"{live_hub.url}/v1/chat/completions", headers=auth, json=body, timeout=30)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["message"] and error["type"] == "invalid_request_error" and "param" in error


# --- the document --------------------------------------------------------------------------------


def test_memory_is_reported_part_by_part(live_hub, auth, smollm_path):
    """GET /api/memory (issue #43): the model's weights as far as resident, its KV cache as
    llama.cpp allocated it, the home and each prepared language by the objects they hold, the
    rest; the hub's own share is the RSS less the model's parts."""
    report = requests.get(f"{live_hub.url}/api/memory", headers=auth, timeout=120).json()
    parts = report["parts"]
    assert sum(parts.values()) == report["rss"]
    assert report["own"] == report["rss"] - parts["weights"] - parts["kv_cache"] - parts["prompt_states"]
    assert parts["kv_cache"] == inspect_gguf(smollm_path, n_ctx=4096).kv_cache_bytes()
    assert 0 < parts["weights"] <= smollm_path.stat().st_size
    assert parts["home"] > 0 and parts["fast_path"] == sum(report["detail"]["fast_path"].values()) > 0
    assert report["languages"]["en"] == "full"
    model_only = requests.get(f"{live_hub.url}/api/memory", params={"objects": "false"}, headers=auth,
                              timeout=30).json()
    assert "fast_path" not in model_only["parts"] and model_only["parts"]["kv_cache"] == parts["kv_cache"]
    for unclear in ("null", ["true", "false"]):  # a clear error, never a guess
        refused = requests.get(f"{live_hub.url}/api/memory", params={"objects": unclear}, headers=auth, timeout=30)
        assert refused.status_code == 400 and refused.json()["error"] == "invalid_parameter", refused.text


def test_openapi_document_is_valid_and_complete(live_hub, auth):
    document = requests.get(f"{live_hub.url}/api/openapi.json", headers=auth, timeout=10).json()
    validate_openapi(document)
    assert document["openapi"].startswith("3.1")
    documented = {(method.upper(), path) for path, item in document["paths"].items() for method in item}
    served = {(r.method, r.resource.canonical) for r in live_hub.api.app.router.routes()
              if r.method != "HEAD"}
    from hub.interfaces.http.rest_api import PUBLIC_PATHS

    static = {("GET", path) for path in PUBLIC_PATHS - {"/health"}}  # the page's files
    assert served - static == documented


def test_a_taken_port_fails_in_one_clear_error(live_hub, auth):
    from hub.interfaces.http.rest_api import RestApi

    second = RestApi(live_hub.app, live_hub.app.options.http, host="127.0.0.1", port=live_hub.api.port)
    with pytest.raises(OSError, match=r"cannot serve HTTP on 127\.0\.0\.1:\d+"):
        live_hub.run(second.start)
    assert requests.get(f"{live_hub.url}/api/status", headers=auth, timeout=10).status_code == 200
