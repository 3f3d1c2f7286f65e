"""Big homes and the fast path, through the real agent (not a test).

(P3) prompt tokens per entity against Home Assistant's GetLiveContext YAML for the same
     entities (the model's own tokenizer), for what the prompt really carries: a small home's
     overview (up to OVERVIEW_MAX_ENTITIES), and a big home's per-request candidates against
     HA's YAML of the whole exposed home (what GetLiveContext sends). For information, the
     overview format at 1,000 entities (never sent) and the candidate lines against HA's YAML
     of the same candidates.
(P4) first token at 1,000 entities / at 25: a new conversation's first model turn, with the
     stable prefix primed (what PrefixPrimer keeps) and fully cold, median over a command set.
(F)  the fast path: its share of a command set, and its turn latency / the model path's for the
     commands it handled (the same commands with the fast path off).

    python bench/bench_home_scale.py [--model PATH] [--runs 1] [--only p3|p4]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hub.agent.types import TurnRequest  # noqa: E402
from hub.home.catalogue import build_home_tools  # noqa: E402
from hub.home.context import OVERVIEW_MAX_ENTITIES, candidate_context, entity_overview  # noqa: E402
from hub.backends.demo.home import DEMO_AREA_ALIASES, demo_entities  # noqa: E402
from hub.understanding.fast_path import FastPath  # noqa: E402
from hub.home.resolve import EntityResolver  # noqa: E402
from hub.core.tools import ToolRegistry  # noqa: E402
from hub.home.view import StoreHomeView  # noqa: E402
from hub.llm.models import gemma3_270m_path  # noqa: E402
from tests.home.bench_home import ha_context_yaml  # noqa: E402
from tests.home.generated_home import generated_entities  # noqa: E402
from hub.llm.kv_cache import SavedState  # noqa: E402
from hub.llm.types import Usage  # noqa: E402
from tests.perf.agent_rig import (  # noqa: E402
    RecordingEngine, build_agent, demo_store, generated_store, make_cold, restore_only, saved_state, stable_request,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_cache  # noqa: E402
from bench_cache import Result, engine_for, print_results  # noqa: E402

SCALE_COMMANDS = ["turn on the kitchen ceiling light", "switch off the office ceiling light",
                  "turn on the attic ceiling light", "it's too dark in the bedroom",
                  "turn off the garden ceiling light"]
FAST_PATH_COMMANDS = [
    ("turn on the kitchen light", "en"), ("switch off the floor lamp", "en"),
    ("set the kitchen light to 40%", "en"), ("set the bedroom blinds to 30%", "en"),
    ("turn off the coffee machine", "en"), ("set the living room thermostat to 21 degrees", "en"),
    ("Schalte das Licht in der Küche ein", "de"), ("Mach die Stehlampe aus", "de"),
    ("Allume la lumière de la cuisine", "fr"), ("Éteins la lampe du salon", "fr"),
    ("Enciende la luz de la cocina", "es"), ("it's too dark in the living room", "en"),
    ("what's the weather like tomorrow", "en"), ("tell me a joke", "en"),
    ("Wie spät ist es?", "de"), ("could you make it cosy in here", "en"),
]


def p3_tokens(count_tokens) -> list[Result]:  # type: ignore[no-untyped-def]
    """The overview per entity (what a home of up to OVERVIEW_MAX_ENTITIES carries in its stable
    prompt), and what a big home's requests carry per entity shown, each against HA's YAML."""
    results = []
    for label, entities, aliases in (("demo home", demo_entities(), dict(DEMO_AREA_ALIASES)),
                                     ("generated 1,000", generated_entities(1000), {})):
        n = len(entities)
        ha = count_tokens(ha_context_yaml(entities, aliases, include_state=True)) / n
        overview = count_tokens(entity_overview(entities, aliases)) / n
        candidates = count_tokens(candidate_context(entities, aliases)) / n
        sent = n <= OVERVIEW_MAX_ENTITIES
        results.append(Result(f"{'P3' if sent else '  '} overview tokens/entity / HA GetLiveContext, {label}",
                              overview / ha, "≤ 0.5" if sent else "(info: not sent at this size)",
                              f"{overview:.1f} vs {ha:.1f} tokens per entity ({n} entities)"))
        results.append(Result(f"   candidate line (with state) / HA GetLiveContext, {label}", candidates / ha,
                              "(info)", f"{candidates:.1f} vs {ha:.1f} tokens per entity"))
    store = generated_store(1000)
    view = StoreHomeView(store, EntityResolver(store))
    matches = [view.match(text, "en") for text in SCALE_COMMANDS]
    shown = [match.candidates for match in matches]
    per_request = [count_tokens(view.live_states(m.candidates, {e.entity_id for e in m.best})) for m in matches]
    ha_same = [count_tokens(ha_context_yaml(found, {}, include_state=True)) for found in shown]
    results.append(Result("   request context / HA GetLiveContext of the same candidates, 1,000 entities",
                          sum(per_request) / sum(ha_same), "(info)",
                          f"{sum(per_request)} vs {sum(ha_same)} tokens for the {sum(map(len, shown))} "
                          f"candidates of {len(SCALE_COMMANDS)} requests"))
    whole_home = count_tokens(ha_context_yaml(generated_entities(1000), {}, include_state=True))
    results.append(Result("P3 home context per request / HA GetLiveContext of the home, 1,000 entities",
                          statistics.median(per_request) / whole_home, "≤ 0.5",
                          f"{statistics.median(per_request):.0f} tokens (the request's candidates) vs "
                          f"{whole_home} tokens"))
    return results


class _Home:
    """An agent over a generated home of `size` entities on its own engine. Only each turn's
    first token is measured, so generations stop there, and nothing primes conversations."""

    def __init__(self, model: Path, size: int) -> None:
        self.size = size
        self.engine = engine_for(model, priming=False, first_token_only=True)
        self.agent, self.view, self.registry = build_agent(self.engine, generated_store(size))
        self._primed: SavedState | None = None  # the stable prefix's state, once primed

    async def turn(self, text: str, conversation: str, cold: bool) -> Usage:
        if cold:
            await make_cold(self.engine)  # no earlier turn's cached tokens (the same command in a later run)
        else:
            await self._only_prefix()
        await self.agent.ask(TurnRequest(text, conversation_id=conversation))
        usage = self.engine.take()[0].usage
        await self.engine.engine.wait_idle()
        return usage

    async def _only_prefix(self) -> None:
        """The stable prefix primed and nothing else cached: primed once, then its saved state
        restored before each turn (the same KV state, without evaluating it again)."""
        if self._primed is None:
            request = stable_request(self.view, self.registry)
            await make_cold(self.engine)
            assert await self.engine.engine.prime(request), "the engine was busy"
            self._primed = saved_state(self.engine, self.engine.engine.prompt_tokens(request, add_generation_prompt=False))
        await restore_only(self.engine, self._primed)


async def p4_first_token(model: Path, runs: int = 1) -> list[Result]:
    """Both homes side by side: each command goes to both, in alternating order, so a load
    change on a shared machine hits both sizes alike."""
    results = []
    n = len(SCALE_COMMANDS)
    small, big = _Home(model, 25), _Home(model, 1000)
    for label, cold in (("primed prefix", False), ("cold", True)):
        usages: dict[_Home, list[Usage]] = {small: [], big: []}
        for run in range(runs):
            for number, text in enumerate(SCALE_COMMANDS):
                for home in (small, big) if (run + number) % 2 == 0 else (big, small):
                    usages[home].append(await home.turn(text, f"{label}-{run}-{number}", cold))
        seconds = {home: [u.first_token_s for u in usages[home]] for home in (small, big)}
        big_s, small_s = statistics.median(seconds[big]), statistics.median(seconds[small])
        per_run = sorted(statistics.median(seconds[big][r * n:(r + 1) * n])
                         / statistics.median(seconds[small][r * n:(r + 1) * n]) for r in range(runs))
        spread = f"; per run {per_run[0]:.2f}–{per_run[-1]:.2f}" if runs > 1 else ""
        evaluated = {home: statistics.median(u.evaluated_prompt_tokens for u in usages[home]) for home in (small, big)}
        results.append(Result(f"P4 first token 1,000 / 25 entities, {label}", big_s / small_s, "≤ 1.5",
                              f"{big_s:.2f} s vs {small_s:.2f} s (medians of {runs * n}){spread}; evaluated "
                              f"tokens {evaluated[big]:.0f} vs {evaluated[small]:.0f}"))
    for home in (small, big):
        await home.engine.close()
    return results


async def turn_seconds(agent, text: str, language: str, conversation: str) -> float:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    await agent.ask(TurnRequest(text, language=language, conversation_id=conversation))
    return time.perf_counter() - started


async def fast_path_share(engine: RecordingEngine) -> list[Result]:
    store = demo_store()
    resolver = EntityResolver(store)
    registry = ToolRegistry()
    for tool in build_home_tools(store, resolver):
        registry.register(tool)
    fast_path = FastPath(store, registry, resolver)
    for language in {language for _, language in FAST_PATH_COMMANDS}:
        await fast_path.prepare(language)
    # a command the fast path leaves to the model is not timed: its model turn stops at the first token
    untimed = RecordingEngine(engine.engine, priming=False, first_token_only=True)
    with_fast, _, _ = build_agent(untimed, store, fast_path=fast_path)
    model_only, _, _ = build_agent(engine, demo_store())
    fast_times, model_times, handled = [], [], 0
    for number, (text, language) in enumerate(FAST_PATH_COMMANDS):
        seconds = await turn_seconds(with_fast, text, language, f"f{number}")
        if not untimed.take():  # no model round: the fast path answered
            handled += 1
            fast_times.append(seconds)
            model_times.append(await turn_seconds(model_only, text, language, f"m{number}"))
            engine.take()
    share = handled / len(FAST_PATH_COMMANDS)
    fast_s, model_s = statistics.median(fast_times), statistics.median(model_times)
    return [Result("F  fast path share of the command set", share, "(info)",
                   f"{handled} of {len(FAST_PATH_COMMANDS)} commands in en/de/fr/es"),
            Result("F  fast path turn / model path turn, same commands", fast_s / model_s, "(info)",
                   f"{fast_s * 1000:.1f} ms vs {model_s:.2f} s (medians)")]


async def run_all(model: Path, runs: int = 1, only: str | None = None) -> list[Result]:
    """Every figure; `only="p3"` stops after P3, `only="p4"` after P4 (quicker runs)."""
    engine = engine_for(model)  # P3 counts with its vocabulary, F runs on it
    try:
        results = p3_tokens(engine.count_tokens)
        if only != "p3":
            results += await p4_first_token(model, runs)
        if only is None:
            results += await fast_path_share(engine)
    finally:
        await engine.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=None, help="GGUF file (default: Gemma 3 270M)")
    parser.add_argument("--runs", type=int, default=1, help="passes over the P4 command set")
    parser.add_argument("--threads", type=int, default=0, help="llama.cpp threads (0: all cores)")
    parser.add_argument("--only", choices=["p3", "p4"], default=None, help="just P3 or just P3 and P4")
    args = parser.parse_args()
    bench_cache.THREADS = args.threads
    print_results(asyncio.run(run_all(args.model or gemma3_270m_path(), args.runs, args.only)))


if __name__ == "__main__":
    main()
