"""The model file from a Hugging Face repository, through `HF_ENDPOINT` to a local server that answers
as the hub does (tests/helpers/hf_mirror.py): fresh, resumed, checked, refused, missing, no room,
offline — each failure a `DownloadFailed` with its reason and a sentence saying what to do."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.hf_mirror import FILE, REPO, HfMirror, Served, mirror, small_gguf  # noqa: F401 (fixtures)
from hub.llm.download import fetch
from hub.llm.download_progress import DownloadFailed, DownloadProgress
from hub.llm.model_source import ModelSource, verified_file
from reliability.served_hub import free_port


def source(tmp_path: Path, token: str | None = None, filename: str = FILE) -> ModelSource:
    return ModelSource(REPO, filename, token, tmp_path / "data" / "models")


def failure(src: ModelSource) -> DownloadFailed:
    progress = DownloadProgress(src)
    with pytest.raises(DownloadFailed) as caught:
        fetch(src, progress)
    assert not src.path.exists()
    return caught.value


def test_a_fresh_download_lands_in_the_data_folder_checked_and_is_used_again_without_network(
        tmp_path: Path, mirror: HfMirror, small_gguf: Path) -> None:
    mirror.serve(REPO, FILE, Served(small_gguf))
    src = source(tmp_path)
    progress = DownloadProgress(src)
    path = fetch(src, progress)
    assert path == tmp_path / "data" / "models" / "nvidia--bolt-test-GGUF" / FILE
    assert path.read_bytes() == small_gguf.read_bytes()
    assert progress.total_bytes == small_gguf.stat().st_size and progress.done_bytes == progress.total_bytes
    assert len(mirror.gets()) == 1 and mirror.gets()[0][2] is None  # the file once, whole
    mirror.stop()  # the next start finds the checked file: no network at all
    assert verified_file(src) == path


def test_a_connection_cut_mid_file_resumes_with_a_range(tmp_path: Path, mirror: HfMirror, smollm_path: Path) -> None:
    """huggingface_hub keeps whole 10 MiB chunks: a cut at 30 MB resumes at 20 MiB, not at 0."""
    mirror.serve(REPO, FILE, Served(smollm_path, cut_after=30_000_000))
    path = fetch(source(tmp_path), DownloadProgress(source(tmp_path)))
    assert path.stat().st_size == smollm_path.stat().st_size
    ranges = [r[2] for r in mirror.gets()]
    assert ranges[0] is None and ranges[1] is not None and ranges[1].startswith("bytes=")
    assert int(ranges[1].split("=")[1].rstrip("-")) >= 10 << 20


def test_a_wrong_checksum_deletes_the_file(tmp_path: Path, mirror: HfMirror, small_gguf: Path) -> None:
    mirror.serve(REPO, FILE, Served(small_gguf, wrong_sha256=True))
    error = failure(source(tmp_path))
    assert error.reason == "bad_checksum" and not error.transient
    assert "sha256" in str(error) and "deleted" in str(error)
    assert verified_file(source(tmp_path)) is None


def test_a_file_that_is_no_gguf_is_refused(tmp_path: Path, mirror: HfMirror) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# not a model\n" * 100)
    mirror.serve(REPO, "README.md", Served(readme))
    error = failure(source(tmp_path, filename="README.md"))
    assert error.reason == "bad_file" and "not a GGUF" in str(error)


def test_a_gated_repository_without_a_token_says_to_set_hf_token(tmp_path: Path, mirror: HfMirror,
                                                                 small_gguf: Path) -> None:
    mirror.serve(REPO, FILE, Served(small_gguf, token="hf_right"))
    error = failure(source(tmp_path))
    assert error.reason == "unauthorized" and "hf_token" in str(error)
    wrong = failure(source(tmp_path, token="hf_wrong"))
    assert wrong.reason == "forbidden" and "license" in str(wrong)
    assert "hf_wrong" not in str(wrong)  # a token is never shown
    path = fetch(source(tmp_path, token="hf_right"), DownloadProgress(source(tmp_path)))
    assert path.read_bytes() == small_gguf.read_bytes()
    # the token went to the hub, not to the CDN the file came from
    assert any(r[3] == "Bearer hf_right" for r in mirror.requests if r[0] == "HEAD")
    assert all(r[3] is None for r in mirror.gets())


def test_a_missing_file_names_both_options(tmp_path: Path, mirror: HfMirror, small_gguf: Path) -> None:
    mirror.serve(REPO, FILE, Served(small_gguf))
    error = failure(source(tmp_path, filename="bolt-q4_k_m.gguf"))
    assert error.reason == "not_found" and "model_repo and model_file" in str(error)


def test_no_room_on_the_disk_is_found_before_a_byte_is_fetched(tmp_path: Path, mirror: HfMirror,
                                                                small_gguf: Path) -> None:
    free = shutil.disk_usage(tmp_path).free
    mirror.serve(REPO, FILE, Served(small_gguf, announced_size=free * 2))
    error = failure(source(tmp_path))
    assert error.reason == "disk_full" and "Not enough disk space" in str(error) and "data_dir" in str(error)
    assert mirror.gets() == []


def test_offline_is_a_transient_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{free_port()}")  # nothing listens there
    error = failure(source(tmp_path))
    assert error.reason == "offline" and error.transient and "network" in str(error)


FETCH_UNDER_A_1_MIB_LIMIT = """
import resource, signal, sys
from pathlib import Path
from hub.llm.download import fetch
from hub.llm.download_progress import DownloadFailed, DownloadProgress
from hub.llm.model_source import ModelSource
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, as a full disk
resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
src = ModelSource(sys.argv[1], sys.argv[2], None, Path(sys.argv[3]))
try:
    fetch(src, DownloadProgress(src))
except DownloadFailed as err:
    print(err.reason, "|", err)
"""


def test_a_disk_that_fills_up_mid_file_says_so_and_leaves_no_partial_file(
        tmp_path: Path, mirror: HfMirror, small_gguf: Path) -> None:
    mirror.serve(REPO, FILE, Served(small_gguf))
    folder = tmp_path / "data" / "models"
    run = subprocess.run([sys.executable, "-c", FETCH_UNDER_A_1_MIB_LIMIT, REPO, FILE, str(folder)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("disk_full |") and "free some space" in run.stdout
    assert not [p for p in folder.rglob("*") if p.is_file() and p.suffix in (".gguf", ".incomplete")]
