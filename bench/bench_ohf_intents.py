"""OHF-Voice/intents' newest suite (tests/understanding/ohf_intents_tests/), every file over its
own home, through the hub and through HA's matcher: sentences carried out per language and intent.

    python bench/bench_ohf_intents.py                      # every sentence of every language (long)
    python bench/bench_ohf_intents.py --per-file 1 en de   # the first sentence of each file
    python bench/bench_ohf_intents.py --misses en          # and the hub's misses HA's matcher gets

Each cell is hub/HA of the sentences scored; the last column the sentences HA's matcher gets that
the hub does not carry out. See tests/understanding/ohf_suite.py for how a file becomes a case.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.understanding.ohf_suite import Scored, languages, run_file, suite_files, with_sentences  # noqa: E402


async def _language(language: str, per_file: int | None) -> list[Scored]:
    scored: list[Scored] = []
    for f in suite_files(language):
        scored += await run_file(with_sentences(f, per_file) if per_file else f)
    return scored


def _row(scored: list[Scored]) -> str:
    hub, ha = sum(s.hub for s in scored), sum(s.ha for s in scored)
    short = sum(s.ha and not s.hub for s in scored)
    return f"{hub}/{ha} of {len(scored)} (hub misses {short} of HA's)"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("languages", nargs="*")
    parser.add_argument("--per-file", type=int, help="sentences per file (default: all)")
    parser.add_argument("--misses", action="store_true")
    args = parser.parse_args()
    chosen = args.languages or languages()
    table: dict[str, dict[str, list[Scored]]] = defaultdict(lambda: defaultdict(list))
    for language in chosen:
        started = time.perf_counter()
        scored = await _language(language, args.per_file)
        for s in scored:
            table[s.case.intent][language].append(s)
        print(f"{language}: {_row(scored)} in {time.perf_counter() - started:.0f} s", flush=True)
        if args.misses:
            for s in scored:
                if s.ha and not s.hub:
                    print(f"  {s.case.file.name}: {s.case.text!r}: {s.why[:160]}")
    print("\n| intent | " + " | ".join(chosen) + " |")
    print("|---|" + "---|" * len(chosen))
    for intent in sorted(table):
        cells = []
        for language in chosen:
            scored = table[intent].get(language, [])
            cells.append(f"{sum(s.hub for s in scored)}/{sum(s.ha for s in scored)}" if scored else "-")
        print(f"| {intent} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    asyncio.run(main())
