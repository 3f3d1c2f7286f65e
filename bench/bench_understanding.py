"""How much of what Home Assistant's intents cover the hub carries out itself, per language.

Sentences are sampled from the installed home-assistant-intents templates over a test home per
language (tests/understanding/harness.py) and sent through the real agent, whose model never
acts: a sentence counts only when the hub carried out exactly what the sentence means.

Columns: the language given; left out (the hub identifies it; the home prefers another
language); each name variant (the home writes names its own way: upper case, CamelCase, with a
device word the speaker drops); language identification on sentences of 3+ words: the text
alone (`hub.understanding.language.candidates`' first choice) and the turn's language with the templates'
say (the language the agent answered in). Then per intent, with the language given.

The latency part: language identification + fast path per utterance through the agent, with
the language left out, in the test home alone (8 devices + 17 generated = 25) and with 1,000
generated devices more, median and p95 over the sentences the fast path carried out, against
the model path (a real stand-in model, same agent) on a few of the same sentences.

The questions part (issue #39): questions about the home answered from its data on the direct
path (a device's battery, what plays, the forecast, the weather outside, list items and calendar
events by the question's words, "is anything on in the kitchen?") through the agent, language
left out, over tests/helpers/answering_home.py's home alone and with 1,000 generated devices
more; median and p95, side by side with a plain command ("turn on the kitchen light") in the
same agent and home.

The real home (issue #40, `--only real`): the home built like a real one (devices with their
battery, signal, power and meter entities, two to-do lists, bench/data/real_home.yaml) and its
requests per point of the issue and language (bench/data/real_home_requests.yaml), carried out
(or asked about exactly the candidates) alone and beside 1,000 generated devices; language id +
fast path turn per request at both sizes (median, p95), with the language left out as HA 2025.4
leaves it.

    python bench/bench_understanding.py [--per-intent 6] [--languages en,de] [--failures 5]
    python bench/bench_understanding.py --only latency [--model PATH]
    python bench/bench_understanding.py --only questions [--languages en,de,fr]
    python bench/bench_understanding.py --only real
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hub.agent.types import TurnRequest  # noqa: E402
from hub.understanding import language as language_id  # noqa: E402
from tests.home import real_home  # noqa: E402
from tests.home.generated_home import generated_entities  # noqa: E402
from tests.understanding.harness import (  # noqa: E402
    INTENTS,
    VARIANTS,
    Outcome,
    Rig,
    Tally,
    home_for,
    languages,
    measure,
    preferred_other,
    sample_cases,
)


def _tally(outcomes: list[Outcome]) -> Tally:
    tally = Tally()
    for outcome in outcomes:
        tally.add(outcome.ok)
    return tally


def _long(outcome: Outcome) -> bool:
    return outcome.case.words >= 3


def _language_tallies(language: str, detected: list[Outcome]) -> tuple[Tally, Tally]:
    text, turn = Tally(), Tally()
    for outcome in filter(_long, detected):
        text.add(language_id.candidates(outcome.case.text, None, preferred_other(language))[0] == language)
        turn.add(outcome.result.language == language)
    return text, turn


async def table(args: argparse.Namespace, chosen: list[str]) -> None:
    started = time.monotonic()
    header = ["lang", "given", "detected", *VARIANTS, "lang id text", "lang id turn"]
    print(" | ".join(f"{h:>18}" if n else f"{h:4}" for n, h in enumerate(header)))
    per_intent: dict[str, dict[str, Tally]] = {}
    totals = collections.defaultdict(Tally)
    for language in chosen:
        given = await measure(language, args.per_intent, seed=args.seed)
        detected = await measure(language, args.per_intent, seed=args.seed, give_language=False)
        row = {"given": _tally(given), "detected": _tally(detected)}
        for variant in VARIANTS:
            row[variant] = _tally(await measure(language, args.per_intent, seed=args.seed, variant=variant))
        row["lang id text"], row["lang id turn"] = _language_tallies(language, detected)
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


def _percentiles(seconds: list[float]) -> str:
    if not seconds:
        return "-"
    ordered = sorted(seconds)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"median {1000 * statistics.median(ordered):6.1f} ms, p95 {1000 * p95:6.1f} ms"


async def latency(args: argparse.Namespace, chosen: list[str]) -> None:
    """Language id + fast path per utterance at 25 and 1,000 entities, then the model path."""
    await language_id.prepare()
    cases = {code: sample_cases(code, args.per_intent, args.seed) for code in chosen}
    handled: list = []
    for label, extra in (("25", 17), ("1,000", 1000)):
        turns, ids, carried, total = [], [], 0, 0
        for code in chosen:
            async with Rig(home_for(code), language_option=preferred_other(code),
                           extra_entities=generated_entities(extra)) as rig:
                await rig.run(cases[code][0], give_language=False)  # loads the language's templates
                for case in cases[code]:
                    began = time.perf_counter()
                    language_id.candidates(case.text, None, preferred_other(code))
                    ids.append(time.perf_counter() - began)
                    outcome = await rig.run(case, give_language=False)
                    total += 1
                    if outcome.ok:  # the same actions at both sizes (a group of the big home's is not)
                        turns.append(outcome.seconds)
                        carried += 1
                        if label == "25" and len(handled) < args.model_turns and code in ("en", "de", "fr"):
                            handled.append(case)
        print(f"{label:>5} entities: language id {_percentiles(ids)}; language id + fast path turn "
              f"{_percentiles(turns)} ({carried}/{total} carried out, {len(chosen)} languages)", flush=True)
    if not handled or args.model_turns == 0:
        return
    from hub.config import validate
    from hub.options import hub_options
    from hub.llm.factory import create_engine
    from hub.llm.models import gemma3_270m_path

    engine = await create_engine(hub_options(validate({"model_path": str(args.model or gemma3_270m_path()),
                                                       "max_tokens": 48, "temperature": 0.0})).llm)
    try:
        seconds = []
        for case in handled:
            async with Rig(home_for(case.language), fast_path=False, engine=engine) as rig:
                seconds.append((await rig.run(case)).seconds)
        print(f"model path ({engine.info.name}, same agent, fast path off): {_percentiles(seconds)} "
              f"over {len(seconds)} of those sentences")
    finally:
        await engine.close()


QUESTIONS = {  # questions no template reads, each answered from the home's data (issue #39)
    "en": ["what's the battery level of the motion sensor?", "what's playing?", "will it rain tomorrow?",
           "what's the temperature outside?", "who do I need to call?", "who am I meeting for dinner?",
           "am I leaving the house today?", "is anything on in the kitchen?"],
    "de": ["Wie hoch ist der Batteriestand vom Motion Sensor?", "Läuft gerade Musik?", "Wird es morgen regnen?",
           "Wie ist die Temperatur draußen?", "Was steht auf meiner Aufgabenliste?", "Habe ich heute Termine außer Haus?",
           "Ist in der Küche etwas an?"],
    "fr": ["Quel est le niveau de batterie du Motion Sensor ?", "Qu'est-ce qui joue en ce moment ?",
           "Va-t-il pleuvoir demain ?", "Quelle est la température dehors ?", "Qu'est-ce qu'il y a sur ma liste de tâches ?",
           "Est-ce que je sors de la maison aujourd'hui ?", "Est-ce que quelque chose est allumé dans la cuisine ?"],
}
COMMAND = {"en": "turn on the kitchen light", "de": "Schalte das Licht in der Küche ein",
           "fr": "Allume la lumière de la cuisine"}


async def questions(chosen: list[str], rounds: int = 3) -> None:
    """Each question `rounds` times through the agent (language left out), at 25 and 1,000 more
    devices, against a plain command in the same agent and home."""
    import tempfile
    from dataclasses import replace

    from tests.async_policy.async_helpers import TestHub
    from tests.helpers.answering_home import AnsweringHome
    from tests.understanding.harness import SilentEngine

    await language_id.prepare()
    for label, extra in (("25", 0), ("1,000", 1000)):
        with tempfile.TemporaryDirectory(prefix="bench-questions-") as folder:
            home = AnsweringHome(Path(folder) / "home")
            await home.start({"todo.personal_tasks": ["Call Liza", "Pay rent"]})
            for entity in generated_entities(extra):
                home.store.upsert(replace(entity, source="demo"))
            readers = [home.registry.get(n) for n in ("list_items", "calendar_events", "weather_forecast")]
            hub = TestHub(Path(folder) / "hub", SilentEngine(), demo_home=False, store=home.store, tools=readers,
                          fast_path=True, rate_limit_per_minute=0)
            asked, commanded, direct, total = [], [], 0, 0
            for code in chosen:
                await hub.agent.ask(TurnRequest(QUESTIONS[code][0]))  # loads the language's templates
                for _ in range(rounds):
                    for text in QUESTIONS[code]:
                        began = time.perf_counter()
                        result = await hub.agent.ask(TurnRequest(text))
                        asked.append(time.perf_counter() - began)
                        total += 1
                        direct += result.path == "fast_path" and result.language == code
                    began = time.perf_counter()
                    await hub.agent.ask(TurnRequest(COMMAND[code]))
                    commanded.append(time.perf_counter() - began)
            await home.stop()
        ratio = statistics.median(asked) / statistics.median(commanded)
        print(f"{label:>5} entities: home question {_percentiles(asked)} ({direct}/{total} on the direct path in "
              f"the question's language); plain command {_percentiles(commanded)}; question/command median "
              f"{ratio:.2f}", flush=True)


async def real(args: argparse.Namespace) -> None:
    """Issue #40's home: carried out per point and language, and each turn's time, at the home's
    own size and beside 1,000 generated devices (the language left out, as HA 2025.4 sends it)."""
    chosen = [code for code in args.languages.split(",") if code] or None
    for label, extra in (("real home", 0), ("real home + 1,000", 1000)):
        tallies: dict[tuple[str, str], Tally] = collections.defaultdict(Tally)
        seconds: list[float] = []
        async with real_home.rig(generated_entities(extra)) as rig:
            for request in real_home.requests(None, tuple(chosen) if chosen else None):
                began = time.perf_counter()
                scored = await real_home.score(rig, request, give_language=False)
                seconds.append(time.perf_counter() - began)
                tallies[(request.point, request.language)].add(scored.ok)
        cells = ", ".join(f"{point} {lang} {tally}" for (point, lang), tally in sorted(tallies.items()))
        print(f"{label:>18}: {cells}")
        print(f"{'':>18}  language id + turn {_percentiles(seconds)} over {len(seconds)} requests", flush=True)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-intent", type=int, default=6, help="sentences per intent and language")
    parser.add_argument("--languages", default="", help="comma-separated (default: all 35)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--failures", type=int, default=0, help="print this many failures per language")
    parser.add_argument("--only", choices=("table", "latency", "questions", "real"))
    parser.add_argument("--model", type=Path, help="GGUF for the model path (default: Gemma 3 270M)")
    parser.add_argument("--model-turns", type=int, default=6)
    args = parser.parse_args()
    chosen = [code for code in args.languages.split(",") if code] or list(languages())
    if args.only in (None, "table"):
        await table(args, chosen)
    if args.only in (None, "latency"):
        await latency(args, chosen)
    if args.only in (None, "questions"):
        await questions([code for code in chosen if code in QUESTIONS] or list(QUESTIONS))
    if args.only in (None, "real"):
        await real(args)


if __name__ == "__main__":
    asyncio.run(main())
