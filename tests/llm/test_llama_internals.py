"""llama-cpp-python beyond its public API is used in hub/llm/llama_internals.py only, and the
installed release still has every name, signature and behaviour that module relies on: a new
pinned version that changes one of them fails here, not in a turn."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import llama_cpp
import llama_cpp.llama_cpp as low_level
import numpy as np
import pytest
from llama_cpp import Llama
from llama_cpp._internals import LlamaBatch, LlamaContext, LlamaModel, LlamaSampler

from hub.llm import llama_internals as raw
from hub.llm.inspect import inspect_gguf
from hub.llm.llama_loading import load_llama

HUB = Path(__file__).resolve().parents[2] / "hub"
THE_MODULE = HUB / "llm" / "llama_internals.py"
# what any module may take from llama-cpp-python: the public Llama, its grammar, its server's main
PUBLIC_NAMES = {"Llama", "LlamaGrammar", "main"}
PUBLIC_MODULES = {"llama_cpp", "llama_cpp.llama_grammar", "llama_cpp.server.__main__"}

# (callable, the parameter names the hub passes, in order)
SIGNATURES = [
    (low_level.llama_state_seq_get_size, ["ctx", "seq_id"]),
    (low_level.llama_state_seq_get_data, ["ctx", "dst", "size", "seq_id"]),
    (low_level.llama_state_seq_set_data, ["ctx", "src", "size", "dest_seq_id"]),
    (low_level.llama_vocab_get_attr, ["vocab", "token"]),
    (low_level.llama_vocab_is_eog, ["vocab", "token"]),
    (low_level.llama_log_set, ["log_callback", "user_data"]),
    (LlamaContext.kv_cache_seq_rm, ["self", "seq_id", "p0", "p1"]),
    (LlamaContext.decode, ["self", "batch"]),
    (LlamaBatch.set_batch, ["self", "batch", "n_past", "logits_all"]),
    (LlamaSampler.sample, ["self", "ctx", "idx"]),
    (LlamaModel.n_ctx_train, ["self"]),
    (LlamaModel.n_params, ["self"]),
    (LlamaModel.add_bos_token, ["self"]),
    (LlamaModel.token_get_text, ["self", "token"]),
]
SAMPLING = {"grammar", "temp", "top_k", "top_p", "min_p", "repeat_penalty"}  # generation's _SAMPLING
LLAMA_ATTRIBUTES = ["_ctx", "_model", "_batch", "_sampler", "_requires_eval", "input_ids", "n_tokens"]


def _private_uses(source: str) -> list[str]:
    """What a module takes from llama-cpp-python past its public API: low-level functions and
    modules, and private attributes of anything but the module's own objects (`self._x`)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("llama_cpp"):
            found += [f"{node.module}.{a.name}" for a in node.names
                      if node.module not in PUBLIC_MODULES or a.name not in PUBLIC_NAMES]
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith("llama_cpp.")]
        elif isinstance(node, ast.Attribute):
            base = node.value
            if isinstance(base, ast.Name) and base.id == "llama_cpp" and node.attr != "__version__":
                found.append(f"llama_cpp.{node.attr}")
            elif node.attr.startswith("_") and not node.attr.startswith("__") and not (
                    isinstance(base, ast.Name) and base.id in ("self", "cls")):
                found.append(f"{ast.unparse(base)}.{node.attr}")
    return found


def test_only_llama_internals_reaches_past_the_public_api() -> None:
    users = [path for path in sorted(HUB.rglob("*.py")) if path != THE_MODULE and "llama_cpp" in path.read_text()]
    assert len(users) >= 8  # the engine, its loading, prompt, generation, drafts, KV states, AMX probe…
    offenders = {str(path.relative_to(HUB)): uses for path in users if (uses := _private_uses(path.read_text()))}
    assert offenders == {}


def test_the_check_sees_a_private_attribute_and_a_low_level_function() -> None:
    source = "import llama_cpp\nfrom llama_cpp import Llama\nx = self._llm._ctx\nn = llama_cpp.llama_n_ctx(c)\n"
    assert _private_uses(source) == ["self._llm._ctx", "llama_cpp.llama_n_ctx"]
    assert _private_uses("from llama_cpp._internals import LlamaSampler\n") == ["llama_cpp._internals.LlamaSampler"]
    assert _private_uses("import llama_cpp\nv = llama_cpp.__version__\nself._model = 1\n") == []


@pytest.mark.parametrize("function, names", SIGNATURES, ids=lambda v: getattr(v, "__qualname__", ""))
def test_the_functions_the_hub_calls_keep_their_signatures(function: object, names: list[str]) -> None:
    assert list(inspect.signature(function).parameters)[: len(names)] == names  # type: ignore[arg-type]
    argtypes = getattr(function, "argtypes", None)
    if argtypes is not None:  # a ctypes binding: the C function takes exactly these
        assert len(argtypes) == len(names)


def test_the_sampler_the_hub_builds_takes_its_sampling_options() -> None:
    assert SAMPLING <= set(inspect.signature(Llama._init_sampler).parameters)


def test_the_constants_and_fields_the_hub_uses_are_there() -> None:
    for name in ("GGML_TYPE_F16", "GGML_TYPE_Q8_0", "GGML_TYPE_Q4_0", "LLAMA_TOKEN_ATTR_CONTROL",
                 "LLAMA_TOKEN_ATTR_UNKNOWN"):
        assert isinstance(getattr(llama_cpp, name), int), name
    assert "use_extra_bufts" in {name for name, _ in low_level.llama_model_params._fields_}
    assert callable(low_level.llama_model_default_params) and callable(llama_cpp.llama_log_callback)


def test_the_llama_behaves_as_the_hub_relies_on() -> None:
    """generate evaluates through self.eval (counted), and eval drops the KV entries past
    n_tokens first (what `rewind` counts on)."""
    generate = inspect.getsource(Llama.generate)
    assert "self.eval(tokens)" in generate
    evaluate = inspect.getsource(Llama.eval)
    assert evaluate.index("self._ctx.kv_cache_seq_rm(-1, self.n_tokens, -1)") < evaluate.index("self._ctx.decode(")
    init = inspect.getsource(Llama.__init__)
    for attribute in LLAMA_ATTRIBUTES:
        assert f"self.{attribute}" in init, attribute


@pytest.mark.slow
def test_each_internal_does_its_job_on_a_real_model(gemma_path: Path) -> None:
    loaded = load_llama(gemma_path, n_ctx=256, n_gpu_layers=0, threads=1, flash_attn=True, kv_cache_type="f16")
    llm = loaded.llm
    try:
        # llama.cpp's log said what it allocated: the KV cache of 256 tokens (every layer: the
        # SWA cache is full-size), a compute buffer, the file's mapping (and its repacked copy)
        assert loaded.buffers["kv_cache"] == inspect_gguf(gemma_path, n_ctx=256).kv_cache_bytes()
        assert loaded.buffers["compute"] > 0
        assert 0.9 < loaded.buffers["weights_mapped"] / gemma_path.stat().st_size < 1.0
        assert loaded.memory(gemma_path)["weights"] >= loaded.buffers.get("weights", 0)
        assert 100_000_000 < raw.parameter_count(llm) < 400_000_000 and raw.trained_context(llm) >= 256
        assert raw.adds_bos(llm) and raw.token_text(llm, llm.token_bos()) == "<bos>"
        assert raw.control_token_test(llm)(llm.token_bos()) and not raw.control_token_test(llm)(
            llm.tokenize(b"kitchen", add_bos=False)[0])
        assert raw.end_of_generation_test(llm)(llm.token_eos())
        tokens = llm.tokenize(b"turn on the kitchen light and the hall lamp")
        counted: list[int] = []
        original = raw.count_evaluations(llm, lambda batch: (counted.append(len(batch)), original(batch))[1])
        llm.eval(tokens)
        assert counted == [len(tokens)] and list(raw.resident_tokens(llm)) == tokens
        state = raw.read_sequence_state(llm, 0, np.empty(raw.sequence_state_size(llm, 0), dtype=np.uint8))
        assert state.size > 0
        raw.drop_from(llm, 3)
        assert list(raw.resident_tokens(llm)) == tokens[:3]
        assert raw.write_sequence_state(llm, 0, np.asarray(tokens, dtype=np.intc), state)
        assert list(raw.resident_tokens(llm)) == tokens
        raw.rewind(llm, len(tokens) - 1)
        llm.eval(tokens[-1:])
        sampler = raw.new_sampler(llm, None, {"temp": 0.0})
        first = raw.sample_at(llm, sampler, -1)
        raw.decode_with_logits(llm, [first, first], len(tokens))
        assert llm.n_tokens == len(tokens) + 2 and 0 <= raw.sample_at(llm, sampler, 0) < llm.n_vocab()
    finally:
        llm.close()
