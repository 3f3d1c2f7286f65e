"""One live hub for the REST tests (loading the model once keeps the folder quick)."""

from __future__ import annotations

from typing import Iterator

import pytest

from helpers.live_hub import TOKEN, LiveHub


@pytest.fixture(scope="session")
def live_hub(tmp_path_factory: pytest.TempPathFactory, smollm_path) -> Iterator[LiveHub]:
    hub = LiveHub(tmp_path_factory.mktemp("rest-hub"), model_path=str(smollm_path)).start()
    yield hub
    hub.stop()


@pytest.fixture
def auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}"}
