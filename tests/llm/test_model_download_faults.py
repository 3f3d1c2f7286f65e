"""What a review found in the model download (issue 42 F2–F4), against a local server that answers
like the Hugging Face hub (tests/helpers/hf_mirror.py): a file in a folder of the repository lands
where it should; a system error (the note's write, a vanished file) is a reported failure that is
tried again, not a silent end; a file that is no GGUF is not fetched again at every start; a
partial file an earlier run left counts as free room; a file that does not load is noted."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from helpers.hf_mirror import FILE, REPO, HfMirror, Served, mirror, small_gguf  # noqa: F401 (fixtures)
from hub.llm.download import SPACE_MARGIN, fetch
from hub.llm.download_progress import DownloadFailed, DownloadProgress
from hub.llm.model_source import ModelSource, load_failure, record_load_failure, verified_file
from hub.llm.upgrade import ModelUpgrade
from hub.state_files import set_aside_under


def source(tmp_path: Path, filename: str = FILE) -> ModelSource:
    return ModelSource(REPO, filename, None, tmp_path / "data" / "models")


def test_a_file_in_a_folder_of_the_repository_lands_in_that_folder(tmp_path: Path, mirror: HfMirror,
                                                                   small_gguf: Path) -> None:
    mirror.serve(REPO, "Q4_K_M/bolt.gguf", Served(small_gguf))
    src = source(tmp_path, "Q4_K_M/bolt.gguf")
    path = fetch(src, DownloadProgress(src))
    assert path == tmp_path / "data" / "models" / "nvidia--bolt-test-GGUF" / "Q4_K_M" / "bolt.gguf"
    assert path.read_bytes() == small_gguf.read_bytes() and verified_file(src) == path
    assert not (path.parent / "Q4_K_M").exists()


async def test_a_note_that_cannot_be_written_is_a_failure_said_and_tried_again(
        tmp_path: Path, mirror: HfMirror, small_gguf: Path) -> None:
    mirror.serve(REPO, FILE, Served(small_gguf))
    src = source(tmp_path)
    blocker = src.path.with_name(FILE + ".verified")
    blocker.mkdir(parents=True)  # the note cannot be written there, as on a full disk
    switched: list[Any] = []

    async def switch(engine: Any) -> None:
        switched.append(engine)

    loaded = SimpleNamespace(info=SimpleNamespace(name="bolt"))  # what switch gets: the load is not tested here
    upgrade = ModelUpgrade(src, lambda path: loaded, switch, setup="test", retry_s=0.2)  # type: ignore[arg-type,return-value]
    task = asyncio.create_task(upgrade.run())
    try:
        for _ in range(300):
            if upgrade.progress.state == "failed":
                break
            await asyncio.sleep(0.05)
        shown = upgrade.progress.as_dict()
        assert shown["state"] == "failed" and shown["reason"] == "file_error" and shown["retrying"], shown
        assert shown["message"] and "tries again" in shown["message"]
        shutil.rmtree(blocker)
        await asyncio.wait_for(task, 60)
    finally:
        task.cancel()
    assert upgrade.progress.state == "done" and switched == [loaded]
    assert verified_file(src) == src.path


def test_a_file_that_is_no_gguf_is_not_downloaded_again_until_it_changes(tmp_path: Path, mirror: HfMirror) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# not a model\n" * 100)
    mirror.serve(REPO, "README.md", Served(readme))
    src = source(tmp_path, "README.md")
    for _ in range(2):
        with pytest.raises(DownloadFailed) as refused:
            fetch(src, DownloadProgress(src))
        assert refused.value.reason == "bad_file" and not refused.value.transient
    assert len(mirror.gets()) == 1  # the second start asked the repository (HEAD) but fetched nothing
    assert "not downloaded again" in str(refused.value)
    readme.write_text("# another file\n" * 100)
    mirror.serve(REPO, "README.md", Served(readme))
    with pytest.raises(DownloadFailed):
        fetch(src, DownloadProgress(src))
    assert len(mirror.gets()) == 2  # the repository's file changed: fetched and checked again


def test_a_partial_file_an_earlier_run_left_is_deleted_said_and_counted_as_room(
        tmp_path: Path, mirror: HfMirror, small_gguf: Path) -> None:
    src = source(tmp_path)
    downloads = src.repo_folder / ".cache" / "huggingface" / "download"
    downloads.mkdir(parents=True)
    leftover = downloads / "Ab12.0123abcd.5f5f5f5f.incomplete"  # huggingface_hub's name for a run's own file
    with leftover.open("wb") as file:
        for _ in range(100):
            file.write(os.urandom(1 << 20))
    # room for the file only once the leftover is gone (half the leftover's size to spare)
    announced = shutil.disk_usage(tmp_path).free - SPACE_MARGIN + (50 << 20)
    mirror.serve(REPO, FILE, Served(small_gguf, announced_size=announced))
    with pytest.raises(DownloadFailed) as failed:
        fetch(src, DownloadProgress(src))
    assert failed.value.reason != "disk_full", failed.value  # the size announced is not the file's: refused later
    assert not leftover.exists()
    [said] = [e for e in set_aside_under(tmp_path) if e.path == leftover]
    assert said.copy is None and "partial download of 104.9 MB" in said.problem


def test_a_load_failure_is_noted_for_this_file_and_setup_only(tmp_path: Path, small_gguf: Path) -> None:
    src = source(tmp_path)
    src.path.parent.mkdir(parents=True)
    shutil.copy(small_gguf, src.path)
    record_load_failure(src, "llama-cpp-python 0.3.36, n_ctx 8192", "llama.cpp rejected it")
    assert load_failure(src, "llama-cpp-python 0.3.36, n_ctx 8192") == "llama.cpp rejected it"
    assert load_failure(src, "llama-cpp-python 0.3.37, n_ctx 8192") is None  # another setup tries again
    stat = src.path.stat()
    os.utime(src.path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # the file changed
    assert load_failure(src, "llama-cpp-python 0.3.36, n_ctx 8192") is None


def test_a_model_the_machine_cannot_hold_is_not_downloaded(tmp_path: Path, mirror: HfMirror, small_gguf: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:        2000000 kB\nMemAvailable:    1500000 kB\n")  # a 2 GB box
    monkeypatch.setattr("hub.llm.download.MEMINFO", meminfo)
    mirror.serve(REPO, FILE, Served(small_gguf, announced_size=1_500_000_000))
    src = source(tmp_path)
    with pytest.raises(DownloadFailed) as refused:
        fetch(src, DownloadProgress(src))
    assert refused.value.reason == "too_little_memory" and not refused.value.transient
    assert "this machine has 2.0 GB" in str(refused.value) and "stand-in keeps serving" in str(refused.value)
    assert mirror.gets() == []
