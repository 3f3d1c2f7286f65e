"""Static checks of `hub`, as configured in pyproject.toml: mypy (strict on every package of
hub), vulture (dead code at 80% confidence) and pyflakes (unused imports, undefined names).

A parameter a caller's signature requires but the hub never reads (paho's `userdata`, `*exc` of
`__aexit__`) is named with a leading underscore; vulture leaves those alone.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run_tool(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m <module>` in the repository root, reading its [tool.<module>] settings."""
    return subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)


@pytest.mark.parametrize("module,args", [("mypy", ()), ("vulture", ()), ("pyflakes", ("hub",))])
def test_hub_passes(module: str, args: tuple[str, ...]) -> None:
    result = run_tool(module, *args)
    assert result.returncode == 0, f"{module} found problems:\n{result.stdout}{result.stderr}"
