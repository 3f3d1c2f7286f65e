"""The state folder's store (hub.state_files): a write is whole and durable (the file fsynced
before the rename, the folder after it), a damaged file is set aside beside it and listed, a few
copies at most, and a damaged file that cannot be set aside is never written over."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hub.state_files import (DAMAGED, KEPT_COPIES, JsonStateFile, NotWritten, Reading, set_aside,
                             set_aside_under, write_json)


def test_a_write_is_fsynced_before_the_rename_and_the_folder_after(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    steps: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(descriptor: int) -> None:
        steps.append("fsync folder" if os.path.isdir(f"/proc/self/fd/{descriptor}") else "fsync file")
        real_fsync(descriptor)

    def replace(source: Any, target: Any) -> None:
        steps.append("rename")
        real_replace(source, target)

    monkeypatch.setattr("hub.state_files.os.fsync", fsync)
    monkeypatch.setattr("hub.state_files.os.replace", replace)
    write_json(tmp_path / "settings.json", {"values": {}})
    assert steps == ["fsync file", "rename", "fsync folder"]
    assert [p.name for p in tmp_path.iterdir()] == ["settings.json"]


def counting_file(path: Path) -> JsonStateFile[list[int]]:
    """Numbers; anything else in the list is left out."""
    def read(saved: Any) -> Reading[list[int]]:
        kept = [n for n in saved if isinstance(n, int)]
        return Reading(kept, ("not a number",) * (len(saved) - len(kept)), "the numbers are kept")

    return JsonStateFile(path, read, lambda text: Reading([], ("unreadable",), "none kept"), lambda value: value)


def test_a_damaged_file_is_set_aside_listed_and_what_was_read_written_back(tmp_path: Path) -> None:
    path = tmp_path / "numbers.json"
    path.write_text('[1, "two", 3]')
    assert counting_file(path).load() == [1, 3]
    copies = list(tmp_path.glob(f"numbers.json{DAMAGED}*"))
    assert [c.read_text() for c in copies] == ['[1, "two", 3]']
    assert path.read_text().split() == ["[", "1,", "3", "]"]
    [entry] = set_aside_under(tmp_path)
    assert entry.path == path and entry.copy == copies[0] and entry.outcome == "the numbers are kept"
    assert set_aside_under(tmp_path / "elsewhere") == []
    for _ in range(KEPT_COPIES + 2):  # a disk that damages it again and again keeps a few copies
        set_aside(path, "again", "kept")
    assert len(list(tmp_path.glob(f"numbers.json{DAMAGED}*"))) == KEPT_COPIES


LOAD_UNDER_A_4_BYTE_LIMIT = """
import resource, signal, sys
from pathlib import Path
from hub.state_files import JsonStateFile, NotWritten, Reading
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a longer write fails with EFBIG, as on a full disk
resource.setrlimit(resource.RLIMIT_FSIZE, (4, 4))
numbers = JsonStateFile(Path(sys.argv[1]), lambda saved: Reading(saved), lambda text: Reading([], ("unreadable",), "none"),
                        lambda value: value)
print(numbers.load())
try:
    numbers.save([7])
except NotWritten as err:
    print("not written:", err)
"""


def test_a_damaged_file_that_cannot_be_set_aside_is_never_written_over(tmp_path: Path) -> None:
    path = tmp_path / "numbers.json"
    path.write_text("[1, 2")
    run = subprocess.run([sys.executable, "-c", LOAD_UNDER_A_4_BYTE_LIMIT, str(path)], capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0] == "[]" and "could not be set aside" in run.stdout
    assert "left as it is, never written over" in run.stderr
    assert path.read_text() == "[1, 2" and [p.name for p in tmp_path.iterdir()] == ["numbers.json"]
