"""Names across languages (issue #28 point 7): requests in de nl sv pl cs fi es fr it pt to a home
whose names are English, through the real agent and fast path (bench/data/names_across_languages.yaml).

Per language: carried out (exactly the devices meant, in the direction said) and swaps (a device
acted on that the request does not mean). `--forms` compares how inflected and compounded words
are found (hub.home.word_forms): Snowball stems with the hand-written ending rule (the hub's),
the rule alone, Snowball alone, and simplemma's lemmas in place of stems (when installed).

`--forms` also scores each way word by word (bench/data/word_forms.yaml: inflected room and
device words in ten inflecting languages, found or not, and false matches with another word).

`--real`: the home built like a real one of issue #40 (bench/data/real_home.yaml: devices with
their battery, signal, power and meter entities, vacuums, a mower, valves and media players on
three floors, two to-do lists) and its requests per point and language (bench/data/real_home_requests.yaml): the
share carried out as Home Assistant's handler would (or asked about exactly the candidates), and
the questions that named a device and its own sensors.

    python bench/bench_names.py [--languages de,pl] [--failures 3] [--forms] [--real]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterator
from contextlib import contextmanager

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hub.home import name_index, word_forms  # noqa: E402
from tests.home import real_home  # noqa: E402
from tests.home.names_set import home, requests, score  # noqa: E402
from tests.understanding.harness import Rig  # noqa: E402


@contextmanager
def _forms(kind: str) -> Iterator[None]:
    """The hub's word forms with some of their ways of finding a word switched off or swapped."""
    original = name_index.WordForms
    original_stem: Callable[[str, str], str] = word_forms.stem
    options: dict[str, Any] = {"snowball + rule": {}, "rule only": {"stems": False},
                               "snowball only": {"rule": False}, "simplemma + rule": {}}[kind]
    if kind == "simplemma + rule":
        import simplemma  # type: ignore[import-untyped]

        def lemma(word: str, language: str) -> str:
            try:
                return str(simplemma.lemmatize(word, lang={"hr": "hbs", "sr": "hbs"}.get(language, language)))
            except ValueError:  # a language simplemma lacks
                return word

        word_forms.stem = lemma  # type: ignore[assignment]
    name_index.WordForms = lambda known, language: original(known, language, **options)  # type: ignore[misc,assignment]
    try:
        yield
    finally:
        name_index.WordForms = original  # type: ignore[misc]
        word_forms.stem = original_stem  # type: ignore[assignment]


async def run(languages: list[str] | None, failures: int, label: str) -> None:
    started = time.monotonic()
    tallies: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0, 0])  # done, swaps, total
    missed: dict[str, list[str]] = collections.defaultdict(list)
    async with Rig(home()) as rig:
        for request in requests(languages):
            scored = await score(rig, request)
            tally = tallies[request.language]
            tally[0] += scored.carried_out
            tally[1] += bool(scored.swapped)
            tally[2] += 1
            if not scored.carried_out:
                missed[request.language].append(f"{request.text!r}: {list(scored.acted)} {scored.reply[:80]!r}")
    print(f"\n{label}")
    print("lang  carried out      swaps")
    done = swaps = total = 0
    for language, (right, swapped, count) in tallies.items():
        print(f"{language:4}  {right:3}/{count:3} {100 * right / count:5.1f}%  {swapped:3}")
        for line in missed[language][:failures]:
            print(f"        {line}")
        done, swaps, total = done + right, swaps + swapped, total + count
    print(f"all   {done:3}/{total:3} {100 * done / max(total, 1):5.1f}%  {swaps:3}   ({time.monotonic() - started:.0f} s)")


async def real(languages: list[str] | None, failures: int) -> None:
    """Issue #40's home: carried out per point and language, questions about a device's siblings."""
    started = time.monotonic()
    tallies: dict[tuple[str, str], list[int]] = collections.defaultdict(lambda: [0, 0])
    missed: dict[tuple[str, str], list[str]] = collections.defaultdict(list)
    scored = []
    async with real_home.rig() as rig:
        for request in real_home.requests(None, tuple(languages) if languages else None):
            result = await real_home.score(rig, request)
            scored.append(result)
            tally = tallies[(request.point, request.language)]
            tally[0] += result.ok
            tally[1] += 1
            if not result.ok:
                missed[(request.point, request.language)].append(f"{request.text!r}: {result.why[:90]}")
        siblings = real_home.sibling_questions(rig.home, scored)
    print("\nreal home (issue #40): carried out, or asked about exactly the candidates")
    for point, title in real_home.POINTS.items():
        cells = [f"{lang} {done}/{total}" for (p, lang), (done, total) in tallies.items() if p == point]
        print(f"  point {point} ({title}): {', '.join(cells)}")
        for (p, lang), lines in missed.items():
            for line in lines[:failures] if p == point else ():
                print(f"        {lang} {line}")
    done, total = sum(t[0] for t in tallies.values()), sum(t[1] for t in tallies.values())
    print(f"  all {done}/{total} ({100 * done / max(total, 1):.1f}%); questions naming a device and its own "
          f"sensors: {len(siblings)} ({time.monotonic() - started:.0f} s)")


def words(kind: str) -> None:
    """Each inflected word of bench/data/word_forms.yaml against its language's bases."""
    import yaml

    from hub.home.normalize import fold

    data = yaml.safe_load((Path(__file__).parent / "data" / "word_forms.yaml").read_text(encoding="utf-8"))
    hits = false = total = 0
    cells = []
    with _forms(kind):
        for language, pairs in data.items():
            bases = {fold(base, language) for _, base in pairs}
            forms = name_index.WordForms(bases, language)
            found = [forms.forms_of(fold(said, language)) for said, _ in pairs]
            right = sum(fold(base, language) in f for f, (_, base) in zip(found, pairs))
            wrong = sum(bool(f - {fold(base, language)}) for f, (_, base) in zip(found, pairs))
            cells.append(f"{language} {right}/{len(pairs)}" + (f" ({wrong} false)" if wrong else ""))
            hits, false, total = hits + right, false + wrong, total + len(pairs)
    print(f"{kind:17} words found {hits}/{total}, false matches {false}: {', '.join(cells)}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--languages", default="")
    parser.add_argument("--failures", type=int, default=0, help="print this many misses per language")
    parser.add_argument("--forms", action="store_true", help="also the other ways of finding word forms")
    parser.add_argument("--real", action="store_true", help="only issue #40's home built like a real one")
    args = parser.parse_args()
    chosen = [code for code in args.languages.split(",") if code] or None
    if args.real:
        await real(chosen, args.failures)
        return
    kinds = ["snowball + rule"]
    if args.forms:
        kinds += ["rule only", "snowball only"]
        try:
            import simplemma  # type: ignore[import-untyped]  # noqa: F401
            kinds.append("simplemma + rule")
        except ImportError:
            print("simplemma is not installed: its column is left out")
    for kind in kinds:
        with _forms(kind):
            await run(chosen, args.failures, kind)
    await real(chosen, args.failures)
    if args.forms:
        print()
        for kind in kinds:
            words(kind)


if __name__ == "__main__":
    asyncio.run(main())
