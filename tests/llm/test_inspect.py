"""`bolt-hub check`'s view of a GGUF file: read from the header, clear errors for bad files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hub.llm.inspect import inspect_gguf
from hub.llm.types import EngineError


def test_reads_the_real_models(smollm_path: Path, gemma_path: Path) -> None:
    smol = inspect_gguf(smollm_path, n_ctx=4096)
    assert smol.architecture == "llama" and smol.n_ctx_train == 8192
    assert 130e6 < smol.n_params < 140e6
    assert smol.chat_template and "<|im_start|>" in smol.chat_template
    assert smol.file_size == smollm_path.stat().st_size
    gemma = inspect_gguf(gemma_path)
    assert gemma.architecture == "gemma3" and gemma.n_ctx_train == 32768
    assert 260e6 < gemma.n_params < 280e6 and gemma.chat_template is None
    lines = "\n".join(gemma.describe())
    assert "gemma3" in lines and "memory estimate" in lines and "none" in lines


def test_memory_estimate_is_weights_plus_kv_cache(smollm_path: Path) -> None:
    report = inspect_gguf(smollm_path, n_ctx=8192)
    # SmolLM2-135M: 30 layers, 3 KV heads of 64 dims, K and V, f16
    assert report.kv_cache_bytes() == 30 * 3 * (64 + 64) * 8192 * 2
    assert report.kv_cache_bytes(4096) * 2 == report.kv_cache_bytes()
    assert report.kv_cache_bytes(kv_cache_type="q8_0") < report.kv_cache_bytes() / 1.8
    assert report.memory_bytes() == report.file_size + report.kv_cache_bytes()


def test_problems_name_a_context_over_the_training_length(smollm_path: Path) -> None:
    report = inspect_gguf(smollm_path)
    assert report.problems(n_ctx=4096) == []
    [problem] = report.problems(n_ctx=16384)
    assert "16384" in problem and "8192" in problem


def test_bad_files_are_clear_errors(tmp_path: Path, smollm_path: Path) -> None:
    with pytest.raises(EngineError, match="not found"):
        inspect_gguf(tmp_path / "missing.gguf")
    random_bytes = tmp_path / "random.gguf"
    random_bytes.write_bytes(os.urandom(4096))
    with pytest.raises(EngineError, match="not a GGUF"):
        inspect_gguf(random_bytes)
    truncated = tmp_path / "truncated.gguf"
    truncated.write_bytes(smollm_path.read_bytes()[:2000])
    with pytest.raises(EngineError, match="corrupt or truncated"):
        inspect_gguf(truncated)
    garbage_header = tmp_path / "garbage.gguf"
    garbage_header.write_bytes(b"GGUF" + (3).to_bytes(4, "little") + os.urandom(4000))
    with pytest.raises(EngineError, match="corrupt or truncated|not a GGUF|version"):
        inspect_gguf(garbage_header)
    with pytest.raises(EngineError, match="folder"):
        inspect_gguf(tmp_path)
