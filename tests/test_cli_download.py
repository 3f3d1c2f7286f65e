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
    assert "size 98.4 MB" in done.stdout and "the disk and the memory have room" in done.stdout
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


def test_a_repository_or_file_that_would_reach_outside_the_models_folder_is_a_clear_error(tmp_path: Path) -> None:
    """0.6.0 passed them to huggingface_hub, whose ValueError the hub called "interrupted" and
    retried every 300 s."""
    done = run_cli("check", tmp_path=tmp_path, model_repo="../../etc", model_file="..\\evil.gguf")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "model_repo: '../../etc' is not a Hugging Face repository: write it as owner/name" in done.stderr
    assert "model_file: " in done.stderr and "no .., no absolute path, no backslash" in done.stderr
    absolute = run_cli("check", tmp_path=tmp_path, model_repo="owner/name-GGUF", model_file="/etc/passwd")
    assert absolute.returncode == 2 and "model_file: '/etc/passwd'" in absolute.stderr
