"""The README's layout holds: `lint-imports` checks pyproject's contracts, and no module in `hub/`
is over MAX_MODULE_LINES lines nor any function over MAX_FUNCTION_LINES, except a data table: a
function marked `# data table` on its signature that is one literal, not logic (a handful of
statements at most)."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
DATA_TABLE = "# data table"
DATA_TABLE_STATEMENTS = 10  # a marked function is a literal and a few names, not logic
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


def size_problems(source: str, name: str) -> list[str]:
    """Where a module breaks the size rules: its length, its functions' lengths (a marked data
    table excepted), and a data-table marker on a function that is not one."""
    lines = source.splitlines()
    problems = [f"{name}: {len(lines)} lines"] if len(lines) > MAX_MODULE_LINES else []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        length = (node.end_lineno or node.lineno) - node.lineno + 1
        signature = lines[node.lineno - 1: node.body[0].lineno - 1]
        statements = sum(isinstance(n, ast.stmt) for n in ast.walk(node)) - 1
        if any(DATA_TABLE in line for line in signature):
            if statements > DATA_TABLE_STATEMENTS:
                problems.append(f"{name}:{node.lineno} {node.name} is marked a data table but has "
                                f"{statements} statements")
        elif length > MAX_FUNCTION_LINES:
            problems.append(f"{name}:{node.lineno} {node.name}: {length} lines")
    return problems


def test_no_module_or_function_is_too_long() -> None:
    problems = [problem for path in sorted((ROOT / "hub").rglob("*.py"))
                for problem in size_problems(path.read_text(), str(path.relative_to(ROOT)))]
    assert problems == []


def test_the_size_rules_catch_a_long_module_a_long_function_and_a_false_data_table() -> None:
    long_function = "def f():\n" + "    x = 1\n" * MAX_FUNCTION_LINES
    assert size_problems(long_function, "m.py") == [f"m.py:1 f: {MAX_FUNCTION_LINES + 1} lines"]
    table = "def table():  # data table\n    return {\n" + "        'k': 1,\n" * MAX_FUNCTION_LINES + "    }\n"
    assert size_problems(table, "m.py") == []
    logic = long_function.replace("def f():", "def f():  # data table")
    assert size_problems(logic, "m.py") == [f"m.py:1 f is marked a data table but has {MAX_FUNCTION_LINES} statements"]
    assert size_problems("x = 1\n" * (MAX_MODULE_LINES + 1), "m.py") == [f"m.py: {MAX_MODULE_LINES + 1} lines"]
