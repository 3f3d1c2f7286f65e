"""Schemathesis against the served /api/openapi.json of a real hub: valid and invalid requests
for every documented operation; no 5xx, responses as documented, invalid data rejected.

Its own hub (fuzzed settings must not leak into other tests; its model cases start from the
settings it started with). Bounded: a few dozen examples per operation and at most 8 generated
tokens per model call, so a run takes a minute or two.
"""

from __future__ import annotations

from typing import Iterator

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, settings
from schemathesis import GenerationMode
from schemathesis.checks import positive_data_acceptance

from helpers.live_hub import TOKEN, LiveHub

AUTH = {"Authorization": f"Bearer {TOKEN}"}
MODEL_ROUTES = ("/api/ask", "/api/plan", "/v1/chat/completions")
_SHORT_TEXT = 300


@pytest.fixture(scope="module")
def fuzz_hub(tmp_path_factory: pytest.TempPathFactory, smollm_path) -> Iterator[LiveHub]:
    hub = LiveHub(tmp_path_factory.mktemp("fuzz-hub"), model_path=str(smollm_path), max_tokens=16,
                  max_tool_rounds=1).start()
    yield hub
    hub.stop()


@pytest.fixture(scope="module")
def settings_at_start(fuzz_hub: LiveHub) -> dict:
    """The hub's runtime settings before any fuzzing: the other routes' cases may PUT any valid
    settings (one set reasoning to a 3,596-token budget, and each model turn then thought for
    minutes), so every valid model case starts from these again."""
    response = requests.get(f"{fuzz_hub.url}/api/settings", headers=AUTH, timeout=30)
    response.raise_for_status()
    return response.json()


def load_schema(hub: LiveHub, modes: list[GenerationMode]):
    schema = schemathesis.openapi.from_url(f"{hub.url}/api/openapi.json", headers=AUTH)
    schema.config.update(base_url=hub.url, headers=AUTH)
    schema.config.generation.update(modes=modes, allow_x00=True)
    return schema


@pytest.fixture(scope="module")
def any_data_schema(fuzz_hub: LiveHub, settings_at_start: dict):
    return load_schema(fuzz_hub, [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])


@pytest.fixture(scope="module")
def invalid_data_schema(fuzz_hub: LiveHub, settings_at_start: dict):
    return load_schema(fuzz_hub, [GenerationMode.NEGATIVE])


@pytest.fixture(scope="module")
def valid_data_schema(fuzz_hub: LiveHub, settings_at_start: dict):
    return load_schema(fuzz_hub, [GenerationMode.POSITIVE])


def call(case, valid: bool = False) -> None:
    """`valid`: a schema-valid case, made shorter for the model (an invalid one is left as it
    was generated: clamping its `max_tokens` made one valid, and the check that it is refused failed)."""
    excluded = []
    if valid and case.path in MODEL_ROUTES and isinstance(case.body, dict):
        for key in ("max_tokens", "max_completion_tokens"):
            if isinstance(case.body.get(key), int) and case.body[key] > 8:
                case.body[key] = 8  # still valid; keeps the model's share of the run short
        # a 4,000-character text took minutes to prefill, and so did long chat messages
        case.body = _shortened(case.body, lists=case.path == "/v1/chat/completions")
    if case.path == "/v1/chat/completions":
        # OpenAI bodies have rules across fields that no schema states (a tool message answers
        # an earlier call; tool_choice names a given tool): such schema-valid bodies get a 400
        excluded.append(positive_data_acceptance)
    case.call_and_validate(headers=AUTH, timeout=240, excluded_checks=excluded)


def _shortened(value, lists: bool):  # type: ignore[no-untyped-def]
    """Every text cut to `_SHORT_TEXT` characters (where that leaves words), and with `lists` every
    list to its last 4 items (an OpenAI body: a shortened one that breaks a rule across fields gets
    its 400, which that route's check allows)."""
    if isinstance(value, str):
        return value[:_SHORT_TEXT] if len(value) > _SHORT_TEXT and value[:_SHORT_TEXT].strip() else value
    if isinstance(value, dict):
        return {key: _shortened(item, lists) for key, item in value.items()}
    if isinstance(value, list):
        return [_shortened(item, lists) for item in (value[-4:] if lists else value)]
    return value


HEALTH = list(HealthCheck)
other_routes = schemathesis.pytest.from_fixture("any_data_schema").exclude(path=list(MODEL_ROUTES))
model_routes_invalid = schemathesis.pytest.from_fixture("invalid_data_schema").include(path=list(MODEL_ROUTES))
model_routes_valid = schemathesis.pytest.from_fixture("valid_data_schema").include(path=list(MODEL_ROUTES))


@other_routes.parametrize()
@settings(max_examples=40, deadline=None, suppress_health_check=HEALTH)
def test_routes_without_the_model(case):
    call(case)


@model_routes_invalid.parametrize()
@settings(max_examples=40, deadline=None, suppress_health_check=HEALTH)
def test_model_routes_reject_invalid_requests(case):
    """Invalid bodies never reach the model, so these run fast and many."""
    call(case)


@model_routes_valid.parametrize()
@settings(max_examples=2, deadline=None, suppress_health_check=HEALTH,
          phases=[Phase.explicit, Phase.generate], derandomize=True)  # the same turns each run
@pytest.mark.timeout(900)
def test_model_routes_take_valid_requests(case, fuzz_hub: LiveHub, settings_at_start: dict):
    """Each valid request is a real model turn (seconds each): a handful per route, no shrinking."""
    requests.put(f"{fuzz_hub.url}/api/settings", json=settings_at_start, headers=AUTH, timeout=30).raise_for_status()
    call(case, valid=True)
