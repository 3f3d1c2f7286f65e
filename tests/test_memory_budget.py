"""`bolt-hub check`'s memory budget (issue #43 point 1): the parts `serve` will hold, from the model
file's header, the options and the home; bench/bench_memory.py compares it with what serve holds."""

from __future__ import annotations

from pathlib import Path

from hub.config import validate
from hub.llm.inspect import inspect_gguf
from hub.memory_budget import MIB, estimate


def test_the_budget_follows_the_model_the_context_and_the_home(smollm_path: Path, gemma_path: Path) -> None:
    small = estimate(validate({"model_path": str(smollm_path), "n_ctx": 2048}))
    assert small.parts["weights"] == smollm_path.stat().st_size
    assert small.parts["kv_cache"] == inspect_gguf(smollm_path, n_ctx=2048).kv_cache_bytes()
    assert small.own == small.total - sum(small.parts[p] for p in ("weights", "kv_cache", "prompt_states"))
    larger = estimate(validate({"model_path": str(smollm_path), "n_ctx": 8192}))
    assert larger.parts["kv_cache"] == 4 * small.parts["kv_cache"] and larger.own == small.own
    # the demo home's names are German, French, Spanish too: those languages are prepared in full
    assert [code for code, kind in small.languages.items() if kind == "full"] == ["de", "en", "es", "fr"]
    assert len(small.languages) == 35 and 30 * MIB < small.parts["fast_path"] < 100 * MIB
    assert small.own < 300 * MIB
    # Home Assistant's home is not known before it is reached: the configured language alone in full
    home_assistant = estimate(validate({"model_path": str(smollm_path), "ha_url": "http://ha:8123",
                                        "ha_token": "t", "language": "nl"}))
    assert [code for code, kind in home_assistant.languages.items() if kind == "full"] == ["nl"]
    # a larger vocabulary: more of llama.cpp's memory in the rest
    assert estimate(validate({"model_path": str(gemma_path)})).rest > small.rest
    assert any("the hub's own" in line for line in small.describe())
