"""`bolt-hub check` with `model_repo`: what would be downloaded, its size and whether the disk has room,
asked of a local server that answers like the Hugging Face hub (`HF_ENDPOINT`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.hf_mirror import FILE, REPO, HfMirror, Served, mirror  # noqa: F401 (fixture)
from test_cli import run_cli

pytestmark = pytest.mark.slow


def test_check_says_what_would_be_downloaded_and_whether_the_disk_has_room(
        tmp_path: Path, mirror: HfMirror, smollm_path: Path) -> None:
    mirror.serve(REPO, FILE, Served(smollm_path))
    done = run_cli("check", tmp_path=tmp_path, model_repo=REPO, model_file=FILE, hf_token="hf_secret-4711")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"Model download: {REPO}/{FILE} into {tmp_path / 'state' / 'models' / 'nvidia--bolt-test-GGUF'}" \
        in done.stdout
    assert "size 98.4 MB" in done.stdout and "the disk has room" in done.stdout
    assert "4711" not in done.stdout + done.stderr
    assert mirror.gets() == []  # check downloads nothing
    mirror.serve(REPO, FILE, Served(smollm_path, announced_size=1 << 60))
    full = run_cli("check", tmp_path=tmp_path, model_repo=REPO, model_file=FILE)
    assert "download problem (disk_full): Not enough disk space" in full.stdout
    assert full.returncode == 0  # serve would start (with the stand-in) all the same


def test_a_repository_without_its_file_is_a_problem(tmp_path: Path) -> None:
    done = run_cli("check", tmp_path=tmp_path, model_repo=REPO)
    assert done.returncode == 1
    assert any(line.startswith("Problem:") and "model_file" in line for line in done.stdout.splitlines())
