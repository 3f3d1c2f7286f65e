"""The integration's own tests (phacc/: config flow, conversation agent, streaming, diagnostics)
run by pytest-homeassistant-custom-component 0.13.236 on Home Assistant 2025.4.4 in their own
Python 3.13 venv (scripts/install_phacc.sh builds it when missing), from this Python 3.11 suite:
one pytest run, its failures shown here."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SUITE = Path(__file__).resolve().parent / "phacc"
VENV = Path(os.environ.get("PHACC_VENV", REPO / ".cache" / "phacc-venv"))

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def phacc_python() -> Path:
    """The venv's Python, installing it first when needed (idempotent)."""
    install = subprocess.run(["bash", str(REPO / "scripts" / "install_phacc.sh")], capture_output=True, text=True,
                             timeout=900, env={**os.environ, "PHACC_VENV": str(VENV)})
    assert install.returncode == 0, f"scripts/install_phacc.sh failed:\n{install.stdout[-2000:]}\n{install.stderr[-3000:]}"
    return VENV / "bin" / "python"


def test_the_integrations_own_tests_pass_on_home_assistant() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SUPERVISOR_TOKEN")}
    run = subprocess.run(
        [str(phacc_python()), "-m", "pytest", "-c", str(SUITE / "pytest.ini"), "--rootdir", str(SUITE),
         "-p", "no:cacheprovider", "-q", "-rfE", "--durations=5", str(SUITE)],
        cwd=REPO, env={**env, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=600)
    output = run.stdout + run.stderr
    print(output[-3000:])
    assert run.returncode == 0, f"the integration's tests failed:\n{output[-12000:]}"
    passed = re.search(r"(\d+) passed", output)
    written = sum(source.read_text().count("\nasync def test_") for source in SUITE.glob("test_*.py"))
    assert passed and int(passed[1]) >= written and "skipped" not in output, "every test of phacc/ ran"
