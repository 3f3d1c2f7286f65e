"""A hub configured with `model_repo` serves with the stand-in from the start (the fast path, `/health`)
while the file downloads through `HF_ENDPOINT` (tests/helpers/hf_mirror.py), shows the progress,
then switches to the downloaded model without a restart; a failed download says why and what to
do, in `/health` and the log, and the stand-in keeps serving."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any, Callable

import pytest
import requests
import yaml

from helpers.hf_mirror import FILE, REPO, HfMirror, Served, mirror  # noqa: F401 (fixture)
from helpers.live_hub import TOKEN, LiveHub
from reliability.served_hub import free_port

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def health(hub: LiveHub, auth: bool = True) -> dict[str, Any]:
    answer: dict[str, Any] = requests.get(f"{hub.url}/health", headers=AUTH if auth else {}, timeout=10).json()
    return answer


def wait_for(check: Callable[[], Any], timeout: float = 120) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if found := check():
            return found
        time.sleep(0.2)
    raise TimeoutError("not reached")


def fast_path_works(hub: LiveHub) -> None:
    answer = requests.post(f"{hub.url}/api/ask", json={"text": "turn on the kitchen light"}, headers=AUTH,
                           timeout=60).json()
    assert answer["ok"] and answer["path"] == "fast_path", answer
    assert any(c["name"] == "turn_on" for c in answer["tool_calls"]), answer


def addon_defaults() -> dict[str, str]:
    """The model options of the add-on's defaults (config.yaml's `options`, as the Supervisor
    writes them into /data/options.json at the first start)."""
    options = yaml.safe_load((Path(__file__).resolve().parents[3] / "config.yaml").read_text())["options"]
    return {"model_repo": options["model_repo"], "model_file": options["model_file"]}


def test_the_addons_default_model_downloads_while_the_stand_in_serves_then_the_hub_switches_to_it(
        tmp_path: Path, mirror: HfMirror, smollm_path: Path) -> None:
    """The add-on's first start with its defaults (issue 43): the repository and file it names,
    served here by a local server that answers like the Hugging Face hub (the stand-in's bytes
    stand for Gemma 4 E4B's, which cannot be fetched here)."""
    defaults = addon_defaults()
    assert defaults == {"model_repo": "ggml-org/gemma-4-E4B-it-GGUF", "model_file": "gemma-4-E4B-it-Q4_K_M.gguf"}
    # the connection is cut once (resumed with a Range), then the body waits until released
    mirror.serve(defaults["model_repo"], defaults["model_file"],
                 Served(smollm_path, cut_after=30_000_000, hold_after=50_000_000))
    hub = LiveHub(tmp_path, **defaults).start()
    try:
        status = requests.get(f"{hub.url}/api/status", headers=AUTH, timeout=10).json()
        assert status["model"]["stand_in"] and status["model"]["path"] == str(smollm_path)
        state = wait_for(lambda: (h := health(hub))["startup"]["stage"] == "downloading"
                         and h["startup"]["download"]["bytes"] >= 40_000_000 and h)
        assert state["status"] == "ok"  # serving: the stand-in answers meanwhile
        download = state["startup"]["download"]
        assert download["state"] == "downloading" and download["total_bytes"] == smollm_path.stat().st_size
        assert download["rate_bps"] > 0 and download["eta_s"] is not None
        assert download["repo"] == defaults["model_repo"]
        fast_path_works(hub)
        mirror.release()
        done = wait_for(lambda: (h := health(hub))["startup"]["stage"] == "ready" and h)
        assert done["status"] == "ok" and done["startup"]["download"]["state"] == "done"
        downloaded = tmp_path / "models" / "ggml-org--gemma-4-E4B-it-GGUF" / defaults["model_file"]
        status = requests.get(f"{hub.url}/api/status", headers=AUTH, timeout=10).json()
        assert status["model"]["path"] == str(downloaded) and not status["model"]["stand_in"]
        assert downloaded.read_bytes() == smollm_path.read_bytes()
        ranges = [r[2] for r in mirror.gets()]
        # each later GET resumed (the cut, and a read timeout while the body was held)
        assert ranges[0] is None and len(ranges) >= 2 and all(r and r.startswith("bytes=") for r in ranges[1:])
        fast_path_works(hub)
        answer = requests.post(f"{hub.url}/api/ask", json={"text": "tell me a joke about france"},
                               headers=AUTH, timeout=240).json()
        assert answer["ok"] and answer["path"] == "model", answer  # the downloaded model answers
    finally:
        hub.stop()
    # the next start finds the checked file and asks no server
    mirror.stop()
    again = LiveHub(tmp_path, **defaults).start()
    try:
        assert health(again)["startup"].get("download") is None
        status = requests.get(f"{again.url}/api/status", headers=AUTH, timeout=10).json()
        assert status["model"]["path"] == str(downloaded)
    finally:
        again.stop()


FAILURES = {
    "unauthorized": ({"token": "hf_secret"}, "hf_token"),
    "not_found": ({"file": "other.gguf"}, "model_file"),
    "bad_checksum": ({"wrong_sha256": True}, "sha256"),
    "disk_full": ({"announced_size": 1 << 60}, "Not enough disk space"),
    "offline": ({"offline": True}, "network"),
    # a machine of 4 GB for a file of 3.9 GB: its memory cannot hold it with a context (issue 43)
    "too_little_memory": ({"announced_size": 3_900_000_000, "memory_kb": 4_000_000}, "this machine has 4.1 GB"),
}


@pytest.mark.parametrize("reason", list(FAILURES))
def test_a_failed_download_says_why_and_the_stand_in_keeps_serving(
        reason: str, tmp_path: Path, mirror: HfMirror, smollm_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    fault, words = FAILURES[reason]
    if fault.get("offline"):
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{free_port()}")
    if fault.get("memory_kb"):
        meminfo = tmp_path / "meminfo"
        meminfo.write_text(f"MemTotal:       {fault['memory_kb']} kB\nMemFree:        1000 kB\n")
        monkeypatch.setattr("hub.llm.download.MEMINFO", meminfo)
    served_as = str(fault.get("file", FILE))
    mirror.serve(REPO, served_as, Served(smollm_path, token=fault.get("token"),
                                         wrong_sha256=bool(fault.get("wrong_sha256")),
                                         announced_size=fault.get("announced_size")))
    caplog.set_level(logging.INFO)
    hub = LiveHub(tmp_path, model_repo=REPO, model_file=FILE).start()
    try:
        failed = wait_for(lambda: (h := health(hub))["startup"].get("download", {}).get("state") == "failed"
                          and h["startup"]["stage"] == "ready" and h)
        download = failed["startup"]["download"]
        assert failed["status"] == "ok" and download["reason"] == reason and words in download["message"]
        # the LAN (no token) sees the state and the reason, never the repository, file or folder
        public = health(hub, auth=False)
        assert public["startup"]["download"]["reason"] == reason and public["startup"]["download"]["state"] == "failed"
        assert REPO not in str(public) and FILE not in str(public) and str(tmp_path) not in str(public)
        assert any(r.levelno == logging.ERROR and reason in r.getMessage() and words in r.getMessage()
                   for r in caplog.records)
        fast_path_works(hub)
        status = requests.get(f"{hub.url}/api/status", headers=AUTH, timeout=10).json()
        assert status["model"]["stand_in"] and status["download"]["reason"] == reason
        assert not (tmp_path / "models" / "nvidia--bolt-test-GGUF" / FILE).exists()
    finally:
        hub.stop()


def test_a_downloaded_file_that_does_not_load_keeps_the_stand_in_at_every_later_start(
        tmp_path: Path, mirror: HfMirror, caplog: pytest.LogCaptureFixture) -> None:
    """0.6.0 noted the file as checked before loading it: the next start loaded it, failed and
    exited 2, and the Supervisor restarted the add-on forever."""
    caplog.set_level(logging.INFO)
    unloadable = tmp_path / "served.gguf"
    unloadable.write_bytes(b"GGUF" + bytes(range(256)) * 4_000)  # a GGUF header, no model
    mirror.serve(REPO, FILE, Served(unloadable))
    first = LiveHub(tmp_path, model_repo=REPO, model_file=FILE).start()
    try:
        failed = wait_for(lambda: (h := health(first))["startup"].get("download", {}).get("state") == "failed" and h)
        assert failed["startup"]["download"]["reason"] == "load_failed", failed
    finally:
        first.stop()
    mirror.stop()
    caplog.clear()
    again = LiveHub(tmp_path, model_repo=REPO, model_file=FILE).start()  # 0.6.0: EngineError, exit 2
    try:
        shown = health(again)  # serving (the stand-in primes meanwhile)
        assert shown["startup"]["download"]["state"] == "failed"
        assert shown["startup"]["download"]["reason"] == "load_failed"
        assert "not loaded again until it changes" in shown["startup"]["download"]["message"]
        fast_path_works(again)
        status = requests.get(f"{again.url}/api/status", headers=AUTH, timeout=10).json()
        assert status["model"]["stand_in"]
        assert not any("could not be loaded" in r.getMessage() for r in caplog.records)  # not even tried
    finally:
        again.stop()
