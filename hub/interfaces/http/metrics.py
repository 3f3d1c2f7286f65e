"""Prometheus text metrics for the hub: turns, errors, stage latencies, tokens, tools, model.

Any interface feeds the same `HubMetrics` with `record_turn(result, source)` after a turn's
`TurnDone`; `/metrics` renders it. No client library: the exposition format is small.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from typing import Iterable

from hub.agent.types import TurnResult
from hub.llm.types import ModelInfo

# seconds; voice turns live between tens of milliseconds and tens of seconds
LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
STAGES = ("prefill", "first_token", "decode", "thinking", "tools", "total")

Labels = tuple[tuple[str, str], ...]


@dataclass
class _Histogram:
    buckets: tuple[float, ...]
    counts: list[int] = field(default_factory=list)
    total: float = 0.0
    count: int = 0

    def __post_init__(self) -> None:
        self.counts = [0] * len(self.buckets)

    def observe(self, value: float) -> None:
        for i, bound in enumerate(self.buckets):
            if value <= bound:
                self.counts[i] += 1
        self.total += value
        self.count += 1


class HubMetrics:
    """Counters and histograms with labels; thread-safe so engine threads may feed it too."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counters: dict[str, dict[Labels, float]] = {}
        self._histograms: dict[str, dict[Labels, _Histogram]] = {}
        self._help: dict[str, str] = {}

    # --- feeding ------------------------------------------------------------------------------

    def inc(self, name: str, help_text: str, amount: float = 1.0, **labels: str) -> None:
        with self._lock:
            self._help.setdefault(name, help_text)
            series = self._counters.setdefault(name, {})
            key = _labels(labels)
            series[key] = series.get(key, 0.0) + amount

    def observe(self, name: str, help_text: str, value: float,
                buckets: tuple[float, ...] = LATENCY_BUCKETS, **labels: str) -> None:
        with self._lock:
            self._help.setdefault(name, help_text)
            series = self._histograms.setdefault(name, {})
            key = _labels(labels)
            if key not in series:
                series[key] = _Histogram(buckets)
            series[key].observe(value)

    def record_turn(self, result: TurnResult, source: str) -> None:
        """Everything one finished turn tells: outcome, stage latencies, tokens, tool calls."""
        status = "ok" if result.ok else "error"
        self.inc("bolt_hub_turns_total", "Turns finished, by interface, path and outcome.",
                 source=source, path=result.path, status=status)
        if not result.ok:
            self.inc("bolt_hub_turn_errors_total", "Failed turns by error code.",
                     source=source, code=result.error or "unknown")
        t, model = result.timings, result.timings.model
        stage_values = {"prefill": model.prefill_s, "first_token": t.first_token_s, "decode": model.decode_s,
                        "thinking": model.thinking_s, "tools": t.tools_s, "total": t.total_s}
        for stage in STAGES:
            value = stage_values[stage]
            if stage == "total" or value > 0:
                self.observe("bolt_hub_turn_stage_seconds", "Time spent per turn stage.",
                             value, stage=stage, path=result.path)
        tokens = {"prompt": model.prompt_tokens, "evaluated_prompt": model.evaluated_prompt_tokens,
                  "reused_prompt": max(0, model.prompt_tokens - model.evaluated_prompt_tokens),
                  "completion": model.completion_tokens, "thinking": model.thinking_tokens}
        for kind, count in tokens.items():
            if count:
                self.inc("bolt_hub_tokens_total",
                         "Tokens by kind; reused_prompt came from the KV cache (prefix reuse).",
                         count, kind=kind)
        if t.model_rounds:
            self.inc("bolt_hub_model_rounds_total", "Model generations run for turns.", t.model_rounds)
        for call in result.tool_calls:
            self.record_tool(call.call.name, call.ok, call.seconds, source)
        for reason in result.withheld:
            self.inc("bolt_hub_withheld_sentences_total",
                     "Sentences of the model not spoken, by reason (prompt, entity_id, tool_name, markup, "
                     "language, code, claim, unfinished).", reason=reason)

    def record_tool(self, name: str, ok: bool, seconds: float, source: str) -> None:
        self.inc("bolt_hub_tool_calls_total", "Tool calls by tool and outcome.",
                 tool=name, status="ok" if ok else "error", source=source)
        self.observe("bolt_hub_tool_seconds", "Tool execution time.", seconds, tool=name)

    # --- exposition ---------------------------------------------------------------------------

    def render(self, gauges: Iterable["Gauge"] = ()) -> str:
        """The Prometheus text exposition format (version 0.0.4)."""
        lines: list[str] = []
        for gauge in gauges:
            lines += [f"# HELP {gauge.name} {gauge.help}", f"# TYPE {gauge.name} gauge",
                      f"{gauge.name}{_format_labels(_labels(gauge.labels))} {_number(gauge.value)}"]
        with self._lock:
            for name in sorted(self._counters):
                lines += [f"# HELP {name} {self._help[name]}", f"# TYPE {name} counter"]
                for key, value in sorted(self._counters[name].items()):
                    lines.append(f"{name}{_format_labels(key)} {_number(value)}")
            for name in sorted(self._histograms):
                lines += [f"# HELP {name} {self._help[name]}", f"# TYPE {name} histogram"]
                for key, hist in sorted(self._histograms[name].items()):
                    for bound, count in zip(hist.buckets, hist.counts):
                        # bounds as floats ("1.0"), like the official clients write them
                        lines.append(f"{name}_bucket{_format_labels(key + (('le', repr(float(bound))),))} {count}")
                    lines.append(f"{name}_bucket{_format_labels(key + (('le', '+Inf'),))} {hist.count}")
                    lines.append(f"{name}_sum{_format_labels(key)} {_number(hist.total)}")
                    lines.append(f"{name}_count{_format_labels(key)} {hist.count}")
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Gauge:
    """A value read at scrape time (uptime, entity count, model facts)."""

    name: str
    help: str
    value: float
    labels: dict[str, str] = field(default_factory=dict)


def model_gauges(info: ModelInfo) -> list[Gauge]:
    return [
        Gauge("bolt_hub_model_info", "The loaded model (value is always 1).", 1,
              {"name": info.name, "architecture": info.architecture,
               "stand_in": "true" if info.is_stand_in else "false"}),
        Gauge("bolt_hub_model_context_tokens", "Context size the model was loaded with.", info.n_ctx),
        Gauge("bolt_hub_model_parameters", "Parameter count of the loaded model.", info.n_params),
    ]


def _labels(labels: dict[str, str]) -> Labels:
    return tuple(sorted((k, str(v)) for k, v in labels.items()))


def _format_labels(labels: Labels) -> str:
    if not labels:
        return ""
    inner = ",".join(f'{k}="{_escape(v)}"' for k, v in labels)
    return "{" + inner + "}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _number(value: float) -> str:
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if float(value).is_integer():
        return str(int(value))
    return repr(float(value))


METRICS = HubMetrics()
"""The process-wide metrics every interface feeds (one hub per process)."""
