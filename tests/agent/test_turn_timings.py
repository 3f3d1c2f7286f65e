"""A turn's timings hold its model rounds' usage added up, and report the same flat JSON as before."""

from __future__ import annotations

from hub.agent.types import TurnTimings
from hub.llm.types import Usage

JSON_KEYS = ["prefill_s", "first_token_s", "decode_s", "thinking_s", "tools_s", "total_s", "prompt_tokens",
             "evaluated_prompt_tokens", "completion_tokens", "thinking_tokens", "model_rounds"]


def test_two_rounds_add_up_and_the_turn_keeps_its_own_times() -> None:
    timings = TurnTimings(first_token_s=0.4, tools_s=0.1)
    timings.add_usage(Usage(prompt_tokens=900, evaluated_prompt_tokens=50, completion_tokens=12, prefill_s=0.2,
                            first_token_s=0.25, decode_s=0.3, stop_reason="tool_call"))
    timings.add_usage(Usage(prompt_tokens=950, evaluated_prompt_tokens=40, completion_tokens=8, thinking_tokens=5,
                            prefill_s=0.1, first_token_s=0.15, decode_s=0.2, thinking_s=0.05))
    model = timings.model
    assert (model.prompt_tokens, model.evaluated_prompt_tokens, model.completion_tokens, model.thinking_tokens) == (
        1850, 90, 20, 5)
    assert round(model.prefill_s, 6) == 0.3 and round(model.decode_s, 6) == 0.5
    assert model.first_token_s == 0.25 and model.stop_reason == "stop"  # the first round's, the last one's
    assert timings.model_rounds == 2 and timings.first_token_s == 0.4


def test_the_json_is_the_flat_object_the_apis_always_sent() -> None:
    timings = TurnTimings(Usage(prompt_tokens=10, prefill_s=0.5), first_token_s=0.6, total_s=1.0, model_rounds=1)
    data = timings.as_json()
    assert list(data) == JSON_KEYS
    assert (data["prompt_tokens"], data["prefill_s"], data["first_token_s"], data["total_s"]) == (10, 0.5, 0.6, 1.0)
