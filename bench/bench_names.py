"""Names across languages (issue #28 point 7): requests in de nl sv pl cs fi es fr it pt to a home
whose names are English, through the real agent and fast path (bench/data/names_across_languages.yaml).

Per language: carried out (exactly the devices meant, in the direction said) and swaps (a device
acted on that the request does not mean). `--forms` compares how inflected and compounded words
are found (hub.home.word_forms): Snowball stems with the hand-written ending rule (the hub's),
the rule alone, Snowball alone, and simplemma's lemmas in place of stems (when installed).

`--forms` also scores each way word by word (bench/data/word_forms.yaml: inflected room and
device words in ten inflecting languages, found or not, and false matches with another word).

    python bench/bench_names.py [--languages de,pl] [--failures 3] [--forms]
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
    args = parser.parse_args()
    chosen = [code for code in args.languages.split(",") if code] or None
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
    if args.forms:
        print()
        for kind in kinds:
            words(kind)


if __name__ == "__main__":
    asyncio.run(main())
