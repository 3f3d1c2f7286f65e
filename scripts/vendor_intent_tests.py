"""Regenerate tests/understanding/ohf_intents_tests/ from OHF-Voice/intents' test suite.

Copies `tests/<code>/<Intent>/<slot combination>.yaml` (each file its own small home) for the
hub's languages (the installed home-assistant-intents' code for each, "zh" → "zh-CN"), unchanged,
and writes the folder's README with the commit read and the installed release beside it.
The source is a checkout of the repository or a bare clone (read at HEAD, or `--commit`):

    git clone --bare https://github.com/OHF-Voice/intents /tmp/intents.git
    python scripts/vendor_intent_tests.py /tmp/intents.git

Re-run it whenever home-assistant-intents is updated (the suite follows its templates).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hub.locales import SUPPORTED_LANGUAGES  # noqa: E402
from hub.understanding.recognition import intents_language  # noqa: E402

TARGET = Path(__file__).resolve().parents[1] / "tests" / "understanding" / "ohf_intents_tests"

_README = """# OHF-Voice/intents' test suite (a copy)

The slot-combination tests (`<lang>/<Intent>/<slot combination>.yaml`: each file its own small
home and its sentences) of the hub's 35 languages, and the repository's `intents.yaml` (each
intent's slot combinations; `context_area`: said in the speaker's area), copied unchanged from
[OHF-Voice/intents](https://github.com/OHF-Voice/intents) `tests/` at commit
`{commit}` ({date}), by `scripts/vendor_intent_tests.py`. That project's work (Nabu Casa, the
Open Home Foundation and contributors), under
[Creative Commons Attribution 4.0](https://creativecommons.org/licenses/by/4.0/).

Installed beside it when copied: home-assistant-intents {release} (HA's matcher's column in
`tests/understanding/ohf_suite.py` uses the installed release's templates; the suite's own
templates live in the repository's `sentences/`, which the PyPI package compiles).
{counts}
"""


def _git(source: Path, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(source), *args], capture_output=True, text=True,
                          check=True).stdout


def _files(source: Path, commit: str, code: str) -> dict[str, bytes]:
    """`<Intent>/<combo>.yaml` → its bytes, for one language folder."""
    if (source / "tests").is_dir():  # a checkout
        folder = source / "tests" / code
        return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.glob("*/*.yaml"))}
    listed = _git(source, "ls-tree", "-r", "--name-only", commit, f"tests/{code}/").split()
    wanted = [p for p in listed if p.count("/") == 3 and p.endswith(".yaml")]
    return {p.split("/", 2)[2]: subprocess.run(["git", "--git-dir", str(source), "show", f"{commit}:{p}"],
                                                capture_output=True, check=True).stdout for p in wanted}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", type=Path, help="a checkout or a bare clone of OHF-Voice/intents")
    parser.add_argument("--commit", default="HEAD")
    args = parser.parse_args()
    if (args.source / "tests").is_dir():
        commit = subprocess.run(["git", "-C", str(args.source), "rev-parse", args.commit], capture_output=True,
                                text=True, check=True).stdout.strip()
        date = subprocess.run(["git", "-C", str(args.source), "show", "-s", "--format=%cs", commit],
                              capture_output=True, text=True, check=True).stdout.strip()
    else:
        commit = _git(args.source, "rev-parse", args.commit).strip()
        date = _git(args.source, "show", "-s", "--format=%cs", commit).strip()
    shutil.rmtree(TARGET, ignore_errors=True)
    counts = []
    for language in SUPPORTED_LANGUAGES:
        code = intents_language(language)
        files = _files(args.source, commit, code) if code else {}
        for name, data in files.items():
            path = TARGET / str(code) / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        intents = len({name.split("/", 1)[0] for name in files})
        counts.append(f"| {language} | {code} | {intents} | {len(files)} |")
        print(f"{language} ({code}): {len(files)} files, {intents} intents")
    # which slot combinations are said in the speaker's area (`context_area`), and each intent's slots
    schema = (args.source / "intents.yaml").read_bytes() if (args.source / "tests").is_dir() else \
        subprocess.run(["git", "--git-dir", str(args.source), "show", f"{commit}:intents.yaml"],
                       capture_output=True, check=True).stdout
    (TARGET / "intents.yaml").write_bytes(schema)
    table = "\n| hub | suite | intents | files |\n|---|---|---|---|\n" + "\n".join(counts)
    (TARGET / "README.md").write_text(_README.format(commit=commit, date=date, counts=table,
                                                     release=version("home-assistant-intents")),
                                      encoding="utf-8")


if __name__ == "__main__":
    main()
