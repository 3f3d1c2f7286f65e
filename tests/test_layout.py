"""The import rule of the README's layout holds: `lint-imports` checks pyproject's contracts."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = [sys.executable, "-c", "from importlinter.cli import lint_imports_command; lint_imports_command()"]


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """Runs import-linter on the `hub` package under root (not an installed copy)."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([*LINT_IMPORTS, "--no-cache"], cwd=root, env=env, capture_output=True, text=True,
                          timeout=120)


def test_imports_follow_the_layers() -> None:
    run = lint_imports(ROOT)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 broken" in run.stdout


def test_an_import_against_the_layers_breaks_the_contract(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "hub", tmp_path / "hub", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    (tmp_path / "hub" / "core" / "upward.py").write_text("from hub.interfaces.http import rest_api\n")
    run = lint_imports(tmp_path)
    assert run.returncode != 0
    assert "hub.core.upward -> hub.interfaces.http.rest_api" in run.stdout
