"""Language identification is process-wide once loaded: a test that loads it here unloads it after,
so the tests after it meet the agent as before (named languages, no identification)."""

from __future__ import annotations

import pytest

from hub.understanding import language as language_id


@pytest.fixture(autouse=True)
def _identification_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(language_id._Identifier, "_confidences", language_id._Identifier._confidences)
    monkeypatch.setattr(language_id._KnownWords, "table", language_id._KnownWords.table)
    monkeypatch.setattr(language_id._KnownWords, "with_templates", language_id._KnownWords.with_templates)
