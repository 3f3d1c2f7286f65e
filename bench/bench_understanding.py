"""How much of what Home Assistant's intents cover the hub carries out itself, per language.

Sentences are sampled from the installed home-assistant-intents templates over a test home per
language (tests/understanding/harness.py) and sent through the real agent, whose model never
acts: a sentence counts only when the hub carried out exactly what the sentence means.

Columns: the language given; left out (the hub identifies it); each name variant (the home
writes names its own way: upper case, CamelCase, with a device word the speaker drops); then
per intent, with the language given.

    python bench/bench_understanding.py [--per-intent 6] [--languages en,de] [--failures 5]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.understanding.harness import INTENTS, VARIANTS, Outcome, Tally, languages, measure  # noqa: E402


def _tally(outcomes: list[Outcome]) -> Tally:
    tally = Tally()
    for outcome in outcomes:
        tally.add(outcome.ok)
    return tally


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-intent", type=int, default=6, help="sentences per intent and language")
    parser.add_argument("--languages", default="", help="comma-separated (default: all 35)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--failures", type=int, default=0, help="print this many failures per language")
    args = parser.parse_args()
    chosen = [code for code in args.languages.split(",") if code] or list(languages())

    started = time.monotonic()
    header = ["lang", "given", "detected", *VARIANTS]
    print(" | ".join(f"{h:>18}" if n else f"{h:4}" for n, h in enumerate(header)))
    per_intent: dict[str, dict[str, Tally]] = {}
    totals = collections.defaultdict(Tally)
    for language in chosen:
        given = await measure(language, args.per_intent, seed=args.seed)
        detected = await measure(language, args.per_intent, seed=args.seed, give_language=False)
        row = {"given": _tally(given), "detected": _tally(detected)}
        for variant in VARIANTS:
            row[variant] = _tally(await measure(language, args.per_intent, seed=args.seed, variant=variant))
        for column, tally in row.items():
            totals[column].right += tally.right
            totals[column].total += tally.total
        print(" | ".join([f"{language:4}", *(f"{str(row[c]):>18}" for c in header[1:])]), flush=True)
        intents = per_intent.setdefault(language, collections.defaultdict(Tally))
        for outcome in given:
            intents[outcome.case.intent].add(outcome.ok)
        for outcome in [o for o in given if not o.ok][:args.failures]:
            print(f"       {outcome.case.intent}: {outcome.case.text!r}: {outcome.why[:140]}")
    print(" | ".join(["all ", *(f"{str(totals[c]):>18}" for c in header[1:])]))

    print("\nper intent, language given (share carried out)")
    print("intent                    " + " ".join(f"{code:>4}" for code in chosen))
    for intent in INTENTS:
        cells = [per_intent[code].get(intent) for code in chosen]
        print(f"{intent:26}" + " ".join(f"{100 * c.share:4.0f}" if c and c.total else "   -" for c in cells))
    print(f"\n{len(chosen)} languages, {args.per_intent} sentences per intent, seed {args.seed}, "
          f"{time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    asyncio.run(main())
