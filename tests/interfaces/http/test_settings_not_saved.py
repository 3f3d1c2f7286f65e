"""`PUT /api/settings` when the state folder cannot be written (issue #30 item 5): 0.6.0 answered a
bare 500 and applied the settings anyway. Now a clear 507, nothing applied, no `.tmp` left, over
the real HTTP server; once the folder can be written again, the same request works."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import requests

from helpers.live_hub import TOKEN, LiveHub

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def test_settings_that_cannot_be_saved_are_not_applied(tmp_path: Path, smollm_path: Path) -> None:
    hub = LiveHub(tmp_path, model_path=str(smollm_path)).start()
    try:
        url = f"{hub.url}/api/settings"
        before = requests.get(url, headers=AUTH, timeout=10).json()
        blocker = tmp_path / "settings.json"  # a folder where the file goes: the replace fails
        blocker.mkdir()
        (blocker / "in-the-way").touch()
        change = {"reasoning": "budget", "reasoning_budget": 77}
        refused = requests.put(url, json=change, headers=AUTH, timeout=10)
        assert refused.status_code == 507
        assert refused.json()["error"] == "settings_not_saved"
        assert "nothing was changed" in refused.json()["message"]
        assert requests.get(url, headers=AUTH, timeout=10).json() == before
        assert not list(tmp_path.glob("*.tmp"))
        shutil.rmtree(blocker)
        accepted = requests.put(url, json=change, headers=AUTH, timeout=10)
        assert accepted.status_code == 200 and accepted.json()["reasoning_budget"] == 77
        assert (tmp_path / "settings.json").is_file()
    finally:
        hub.stop()
