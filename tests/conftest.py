"""Fixtures shared by every test folder: the small real models that PyPI packages ship."""

from __future__ import annotations

from pathlib import Path

import pytest

from hub.llm.models import gemma3_270m_path, smollm2_path


@pytest.fixture(scope="session")
def smollm_path() -> Path:
    """SmolLM2-135M-Instruct (ChatML template embedded): the embedded default stand-in."""
    return smollm2_path()


@pytest.fixture(scope="session")
def gemma_path() -> Path:
    """Base Gemma 3 270M (no chat template): Gemma formatting and prefix-reuse mechanics."""
    return gemma3_270m_path()
