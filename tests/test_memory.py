"""What the hub's memory is made of (hub.memory, issue #43 point 1): objects counted once, not
through the code or an event loop; a file's resident pages; the report's rest and own share."""

from __future__ import annotations

import asyncio
import mmap
import sys
from pathlib import Path

from hub.memory import MemoryReport, file_resident_bytes, give_back, object_bytes, resident_bytes


def test_objects_are_counted_once_and_not_through_the_code() -> None:
    shared = "x" * 10_000
    part = [shared, shared, {"key": shared}]
    alone = object_bytes([part])
    assert sys.getsizeof(shared) < alone < 2 * sys.getsizeof(shared)
    counted: set[int] = set()
    object_bytes([part], counted)
    assert object_bytes([[shared]], counted) == sys.getsizeof([shared]), "another part's string is not counted again"
    loop = asyncio.new_event_loop()
    try:
        holder = [loop, sys, test_objects_are_counted_once_and_not_through_the_code]
        assert object_bytes([holder]) == sys.getsizeof(holder)
    finally:
        loop.close()


def test_a_files_resident_pages_and_the_processes_rss(tmp_path: Path) -> None:
    path = tmp_path / "weights.bin"
    path.write_bytes(b"\1" * (4 * 2**20))
    assert file_resident_bytes(path) == 0
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapping:
        sum(mapping[offset] for offset in range(0, 2 * 2**20, mmap.PAGESIZE))  # read half of it
        assert 2 * 2**20 <= file_resident_bytes(path) <= 4 * 2**20
    give_back()
    assert resident_bytes() > 10 * 2**20


def test_the_report_says_the_rest_and_the_hubs_own_share() -> None:
    report = MemoryReport(1000, {"weights": 300, "kv_cache": 100, "prompt_states": 50, "fast_path": 200, "home": 20},
                          {"fast_path": {"en": 150, "de": 50}})
    assert report.rest == 330 and report.own == 550
    assert report.as_json() == {"rss": 1000, "own": 550, "detail": {"fast_path": {"en": 150, "de": 50}}, "languages": {},
                                "parts": {"weights": 300, "kv_cache": 100, "prompt_states": 50, "fast_path": 200,
                                          "home": 20, "rest": 330}}
