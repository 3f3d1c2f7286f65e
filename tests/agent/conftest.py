"""The agent tests' shared fixtures: the real stand-in models, and language identification
unloaded after each test (it is process-wide once loaded: the tests after one that loads it meet
the agent as before, with named languages and no identification)."""

from __future__ import annotations

import asyncio
from functools import cache
from pathlib import Path
from typing import Iterator

import pytest

from hub.llm.llama_engine import LlamaEngine
from hub.understanding import language as language_id


@pytest.fixture(scope="module", params=["smollm", "gemma"])
def real_stand_in(request: pytest.FixtureRequest, smollm_path: Path, gemma_path: Path) -> Iterator[LlamaEngine]:
    """Each real stand-in in turn (SmolLM2-135M-Instruct, base Gemma 3 270M), loaded once a module."""
    engine = LlamaEngine(smollm_path if request.param == "smollm" else gemma_path, n_ctx=4096, seed=11)
    yield engine
    asyncio.run(engine.close())


# What loading identification builds is the same every time (py3langid's model, the word table
# of 35 languages' phrases and templates: seconds on two cores), so it is built once a session;
# whether it is loaded still starts over with each test.
_loaded_model = cache(language_id._Identifier.loader)
_word_table = cache(language_id._word_table)


@pytest.fixture(autouse=True)
def _identification_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    # unloaded, whatever a test elsewhere (a served hub, the MQTT stack) loaded before
    monkeypatch.setattr(language_id._Identifier, "_confidences", None)
    monkeypatch.setattr(language_id._KnownWords, "table", {})
    monkeypatch.setattr(language_id._KnownWords, "with_templates", False)
    monkeypatch.setattr(language_id._Identifier, "loader", staticmethod(_loaded_model))
    monkeypatch.setattr(language_id, "_word_table", _word_table)
