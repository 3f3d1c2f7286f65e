"""Runs the atheris fuzz targets (tests/fuzz/fuzz_parsers.py) for a bounded number of inputs."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("atheris")

REPO = Path(__file__).resolve().parents[2]
RUNS = 20000
RSS_LIMIT_MB = 2048  # libFuzzer's default: what a target may use


@pytest.mark.timeout(240)
@pytest.mark.parametrize("target", ["stream_parser", "mqtt_ask"])
def test_fuzz_target(target: str, tmp_path: Path) -> None:
    # the fuzzer's peak RSS starts at this process's (Linux keeps it across fork and exec): after
    # the real models of earlier tests, that alone passed libFuzzer's 2 GB limit
    inherited_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run(
        [sys.executable, str(REPO / "tests" / "fuzz" / "fuzz_parsers.py"), target, f"-runs={RUNS}", "-seed=1",
         f"-rss_limit_mb={RSS_LIMIT_MB + inherited_mb}", f"-artifact_prefix={tmp_path}/"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=200)
    report = run.stderr[-4000:]
    assert run.returncode == 0, report
    assert f"Done {RUNS} runs" in run.stderr, report
