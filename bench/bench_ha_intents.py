"""The hub against Home Assistant's own intent test suite, with HA's matcher side by side.

Each language's fixture home (the suite's `_fixtures.yaml`) is loaded into a hub over the demo
backend; every test sentence of an intent the hub covers goes through the real agent (its model
never acts) with the language given, and again with it left out (the home prefers another
language); the hub scores when it carried out what HA's handlers would (entities, service,
arguments), or answered a question acting on nothing. The hub matches the installed
home-assistant-intents and release 2025.6.23 (the suite's own, shipped with the hub) both. HA's
matcher (hassil over the installed home-assistant-intents, with the fixtures' slot lists and the
test's context) scores as the suite's own test does: intent and slots. See
tests/understanding/ha_suite.py.

Columns: sentences scored; left out (the satellite's area is needed, or nothing in the fixture
home fits); HA's matcher; the hub with the language given; the hub with it left out. Then per
intent, hub (given) / HA's matcher.

    python bench/bench_ha_intents.py [--suite PATH] [--languages en,de] [--failures 10]
        [--ha-data DIR]   # another release's data folder for HA's column (the suite's own)

DIR: `home_assistant_intents/data` of an unpacked wheel (the suite's release is 2025.6.23:
`pip download home-assistant-intents==2025.6.23 --no-deps`).

--suite: a checkout or a bare git clone of github home-assistant/intents (default: the copy of
the eight main languages in tests/understanding/ha_intents_tests/).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.understanding.harness import Tally  # noqa: E402
from tests.understanding.ha_suite import COVERED, VENDORED, Suite, chosen_languages, measure_suite  # noqa: E402


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", type=Path, default=VENDORED)
    parser.add_argument("--languages", default="", help="comma-separated (default: all the suite has)")
    parser.add_argument("--failures", type=int, default=0, help="print this many hub misses per language")
    parser.add_argument("--no-detected", action="store_true", help="skip the language-left-out run")
    parser.add_argument("--ha-data", type=Path, help="home_assistant_intents/data of another release")
    args = parser.parse_args()
    suite = Suite(args.suite)
    chosen = chosen_languages(suite, [c for c in args.languages.split(",") if c])
    started = time.monotonic()
    header = ("lang", "scored", "left out", "HA matcher", "hub given", "hub detected")
    print(" | ".join(f"{h:>18}" if n > 2 else f"{h:>8}" for n, h in enumerate(header)))
    totals = collections.defaultdict(Tally)
    per_intent: dict[str, dict[str, tuple[Tally, Tally]]] = {}
    for language in chosen:
        scored, left_out = await measure_suite(suite, language, detected=not args.no_detected,
                                               ha_data=args.ha_data)
        row = {"ha": Tally(), "given": Tally(), "detected": Tally()}
        intents = per_intent.setdefault(language, collections.defaultdict(lambda: (Tally(), Tally())))
        for item in scored:
            row["ha"].add(item.ha)
            row["given"].add(bool(item.hub))
            if item.hub_detected is not None:
                row["detected"].add(item.hub_detected)
            hub, ha = intents[item.case.case.intent]
            hub.add(bool(item.hub))
            ha.add(item.ha)
        for column, tally in row.items():
            totals[column].right += tally.right
            totals[column].total += tally.total
        print(" | ".join([f"{language:>8}", f"{len(scored):>8}", f"{sum(left_out.values()):>8}",
                          *(f"{str(row[c]):>18}" for c in ("ha", "given", "detected"))]), flush=True)
        misses = sorted((s for s in scored if not s.hub), key=lambda s: not s.ha)  # HA's hits first
        for item in misses[:args.failures]:
            print(f"      {'HA ok ' if item.ha else ''}{item.case.case.intent}: {item.case.case.text!r}: "
                  f"{item.why[:150]} [reply {item.reply[:80]!r}]")
    print(" | ".join(["     all", " " * 8, " " * 8, *(f"{str(totals[c]):>18}" for c in ("ha", "given", "detected"))]))

    print("\nper intent, hub (language given) / HA's matcher, % of the sentences scored")
    print(f"{'intent':26}" + " ".join(f"{code:>9}" for code in chosen))
    for intent in COVERED:
        cells = [per_intent[code].get(intent) for code in chosen]
        print(f"{intent:26}" + " ".join(f"{100 * c[0].share:4.0f}/{100 * c[1].share:<4.0f}" if c else "        -"
                                        for c in cells))
    print(f"\n{len(chosen)} languages, {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    asyncio.run(main())
