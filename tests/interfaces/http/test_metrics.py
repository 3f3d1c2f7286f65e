"""hub.interfaces.http.metrics renders what the reference Prometheus parser reads back, with the numbers fed in."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from hub.agent.types import ToolFinished, TurnResult, TurnTimings
from hub.llm.types import Usage
from hub.core.messages import ToolCall
from hub.llm.types import ModelInfo
from hub.interfaces.http.metrics import HubMetrics, model_gauges


def families(text: str) -> dict:
    return {f.name: f for f in text_string_to_metric_families(text)}


def test_turns_render_as_valid_exposition_with_the_recorded_values():
    metrics = HubMetrics()
    model = Usage(prefill_s=0.2, decode_s=0.5, prompt_tokens=1000, evaluated_prompt_tokens=100, completion_tokens=20)
    timings = TurnTimings(model, first_token_s=0.3, tools_s=0.05, total_s=0.9, model_rounds=2)
    call = ToolFinished(ToolCall("turn_on", {"entity_id": "light.kitchen"}), True, {}, 0.05)
    metrics.record_turn(TurnResult("c1", "en", "Done.", tool_calls=[call], timings=timings), "rest")
    metrics.record_turn(TurnResult("c2", "en", "Sorry.", ok=False, error="timeout",
                                   timings=TurnTimings(total_s=30.0)), 'wyo"ming\n')
    info = ModelInfo('Bolt "E4B"', "gemma4", "/m.gguf", 8192, 32768, 4_000_000_000)
    parsed = families(metrics.render(model_gauges(info)))

    turns = {tuple(sorted(s.labels.items())): s.value for s in parsed["bolt_hub_turns"].samples}
    assert turns[(("path", "model"), ("source", "rest"), ("status", "ok"))] == 1
    assert turns[(("path", "model"), ("source", 'wyo"ming\n'), ("status", "error"))] == 1  # escaping survives
    errors = parsed["bolt_hub_turn_errors"].samples
    assert [(s.labels["code"], s.value) for s in errors] == [("timeout", 1)]

    stages = parsed["bolt_hub_turn_stage_seconds"]
    assert stages.type == "histogram"
    total = {s.labels["le"]: s.value for s in stages.samples
             if s.name.endswith("_bucket") and s.labels["stage"] == "total"}
    assert total["1.0"] == 1 and total["30.0"] == 2 and total["+Inf"] == 2  # cumulative buckets
    counts = [s.value for s in stages.samples if s.name.endswith("_count") and s.labels["stage"] == "prefill"]
    assert counts == [1]

    tokens = {s.labels["kind"]: s.value for s in parsed["bolt_hub_tokens"].samples}
    assert tokens == {"prompt": 1000, "evaluated_prompt": 100, "reused_prompt": 900, "completion": 20}
    tools = parsed["bolt_hub_tool_calls"].samples
    assert [(s.labels["tool"], s.labels["status"], s.value) for s in tools] == [("turn_on", "ok", 1)]
    model = parsed["bolt_hub_model_info"].samples[0]
    assert model.labels["name"] == 'Bolt "E4B"' and model.value == 1
