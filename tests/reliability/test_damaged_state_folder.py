"""`bolt-hub serve` over a state folder where every file the hub keeps is damaged — names cut
short, settings with a value it no longer takes, timers and lists that are no JSON, a saved prompt
state that does not read back, a model download an earlier run left half done — starts, serves,
and says what it set aside: in the log, on `/health` (names only without the token) and in
`/api/status`. The untargeted device stays untargeted; what could be read applies (issue 42)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import requests

from helpers.hf_mirror import FILE, REPO, HfMirror, Served, mirror  # noqa: F401 (fixture)
from reliability.served_hub import ServedHub

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
TOKEN = "damaged-folder-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
DAMAGED = {  # each file as a crash, a full disk or a hand edit left it
    "names.json": '{"version": 1, "untargeted": ["switch.coffee_maker"], "entity": {"light.desk_lamp": {"added": '
                  '["Reading la',
    "settings.json": '{"values": {"reasoning": "budget", "reasoning_budget": "lots"}, '
                     '"defaults": {"reasoning": "off", "reasoning_budget": 256}}',
    "timers.json": '{"version": 1, "timers": [{"id": "ab12", "na',
    "lists.json": "\x00" * 64,
}
STATE = "prefix_states/0123456789abcdef01234567.kvstate"
PARTIAL = f"models/{REPO.replace('/', '--')}/.cache/huggingface/download/Ab12.0123abcd.5f5f5f5f.incomplete"


def damaged_folder(state: Path) -> None:
    for name, text in DAMAGED.items():
        (state / name).parent.mkdir(parents=True, exist_ok=True)
        (state / name).write_text(text, encoding="utf-8")
    for name, size in ((STATE, 4096), (PARTIAL, 1 << 20)):
        (state / name).parent.mkdir(parents=True, exist_ok=True)
        (state / name).write_bytes(b"\x01" * size)


def get(hub: ServedHub, path: str, auth: bool = True, **body: Any) -> Any:
    url = f"http://127.0.0.1:{hub.ports['http_port']}{path}"
    if body:
        return requests.post(url, json=body, headers=AUTH, timeout=240).json()
    return requests.get(url, headers=AUTH if auth else {}, timeout=30).json()


def test_serve_over_a_damaged_state_folder_starts_serves_and_says_what_it_set_aside(
        tmp_path: Path, mirror: HfMirror, smollm_path: Path) -> None:
    state = tmp_path / "state"
    damaged_folder(state)
    mirror.serve(REPO, FILE, Served(smollm_path, hold_after=1 << 20))  # the download stays under way
    hub = ServedHub(tmp_path, smollm_path, {"api_token": TOKEN, "model_path": "", "model_repo": REPO,
                                            "model_file": FILE}).start()
    try:
        deadline = time.monotonic() + 60
        while get(hub, "/health")["startup"].get("download", {}).get("state") != "downloading":
            assert time.monotonic() < deadline, get(hub, "/health")
            time.sleep(0.2)
        public = get(hub, "/health", auth=False)["set_aside"]
        assert {e["file"] for e in public} == {*DAMAGED, STATE, PARTIAL}, public
        assert all(set(e) == {"file", "copy"} for e in public)  # the LAN sees names, never what was wrong
        for entry in get(hub, "/api/status")["set_aside"]:
            assert entry["problem"] and entry["outcome"], entry
            if entry["file"] == PARTIAL:
                assert entry["copy"] is None and "deleted" in entry["outcome"]
            else:  # the content is kept beside the file
                kept = (state / entry["copy"]).read_bytes()
                assert kept == (DAMAGED[entry["file"]].encode() if entry["file"] in DAMAGED else b"\x01" * 4096)
        # serving, with what could be read: the untargeted device is still left alone
        assert get(hub, "/api/settings") == {"conversational_mode": True, "reasoning": "budget",
                                             "reasoning_budget": 256}
        plan = get(hub, "/api/plan", text="turn on the coffee maker")
        assert all(c["entity_id"] != "switch.coffee_maker" for c in plan["calls"]), plan
        answer = get(hub, "/api/ask", text="turn on the kitchen light")
        assert answer["ok"] and answer["path"] == "fast_path", answer
        log = hub.log()
        for name in (*DAMAGED, STATE, PARTIAL):
            assert f"damaged {state / name}" in log, name
        assert "Traceback" not in log
    finally:
        hub.stop()
