"""Big homes and the fast path, through the real agent (not a test).

(P3) prompt tokens per entity against Home Assistant's GetLiveContext YAML for the same
     entities (the model's own tokenizer): the overview line the stable prompt carries per
     entity, and the candidate line (identity + state) a big home's request carries.
(P4) first token at 1,000 entities / at 25: a new conversation's first model turn, with the
     stable prefix primed (what PrefixPrimer keeps) and fully cold, median over a command set.
(F)  the fast path: its share of a command set, and its turn latency / the model path's for the
     commands it handled (the same commands with the fast path off).

    python bench/bench_home_scale.py [--model PATH] [--runs 1]
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
from hub.home.context import candidate_context, entity_overview  # noqa: E402
from hub.home.demo import DEMO_AREA_ALIASES, demo_entities  # noqa: E402
from hub.home.fast_path import FastPath  # noqa: E402
from hub.home.resolve import EntityResolver  # noqa: E402
from hub.home.tool_base import ToolRegistry  # noqa: E402
from hub.home.view import StoreHomeView  # noqa: E402
from hub.llm.models import gemma3_270m_path  # noqa: E402
from tests.home.bench_home import ha_context_yaml  # noqa: E402
from tests.home.generated_home import generated_entities  # noqa: E402
from tests.perf.agent_rig import build_agent, demo_store, generated_store, stable_request  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_cache  # noqa: E402
from bench_cache import Result, engine_for, make_cold, print_results  # noqa: E402

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
    results = []
    for label, entities, aliases in (("demo home", demo_entities(), dict(DEMO_AREA_ALIASES)),
                                     ("generated 1,000", generated_entities(1000), {})):
        n = len(entities)
        ha = count_tokens(ha_context_yaml(entities, aliases, include_state=True)) / n
        overview = count_tokens(entity_overview(entities, aliases)) / n
        candidates = count_tokens(candidate_context(entities, aliases)) / n
        results.append(Result(f"P3 overview tokens/entity / HA GetLiveContext, {label}", overview / ha, "≤ 0.5",
                              f"{overview:.1f} vs {ha:.1f} tokens per entity ({n} entities)"))
        results.append(Result(f"   candidate line (with state) / HA GetLiveContext, {label}", candidates / ha,
                              "(info)", f"{candidates:.1f} vs {ha:.1f} tokens per entity"))
    store = generated_store(1000)
    view = StoreHomeView(store, EntityResolver(store))
    per_request = statistics.median(
        count_tokens(view.live_states(list(view.candidates(text, "en")))) for text in SCALE_COMMANDS)
    whole_home = count_tokens(ha_context_yaml(generated_entities(1000), {}, include_state=True))
    results.append(Result("   home context per request / HA GetLiveContext of the home, 1,000 entities",
                          per_request / whole_home, "(info)",
                          f"{per_request:.0f} tokens (the request's candidates) vs {whole_home} tokens"))
    return results


async def first_tokens(model: Path, size: int, cold: bool) -> tuple[list[float], list[int]]:
    engine = engine_for(model)
    agent, view, registry = build_agent(engine, generated_store(size))
    times, evaluated = [], []
    for number, text in enumerate(SCALE_COMMANDS):
        if cold:
            make_cold(engine)
        else:
            await engine.engine.prime(stable_request(view, registry))
        await agent.ask(TurnRequest(text, conversation_id=f"{size}-{number}"))
        usage = engine.take()[0].usage
        times.append(usage.first_token_s)
        evaluated.append(usage.evaluated_prompt_tokens)
        await engine.engine.wait_idle()
    await engine.close()
    return times, evaluated


async def p4_first_token(model: Path) -> list[Result]:
    results = []
    for label, cold in (("primed prefix", False), ("cold", True)):
        small, small_eval = await first_tokens(model, 25, cold)
        big, big_eval = await first_tokens(model, 1000, cold)
        ratio = statistics.median(big) / statistics.median(small)
        results.append(Result(f"P4 first token 1,000 / 25 entities, {label}", ratio, "≤ 1.5",
                              f"{statistics.median(big):.2f} s vs {statistics.median(small):.2f} s; evaluated "
                              f"tokens {statistics.median(big_eval):.0f} vs {statistics.median(small_eval):.0f}"))
    return results


async def turn_seconds(agent, text: str, language: str, conversation: str) -> float:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    await agent.ask(TurnRequest(text, language=language, conversation_id=conversation))
    return time.perf_counter() - started


async def fast_path_share(model: Path) -> list[Result]:
    store = demo_store()
    resolver = EntityResolver(store)
    registry = ToolRegistry()
    for tool in build_home_tools(store, resolver):
        registry.register(tool)
    fast_path = FastPath(store, registry, resolver)
    for language in {language for _, language in FAST_PATH_COMMANDS}:
        await fast_path.prepare(language)
    engine = engine_for(model)
    with_fast, _, _ = build_agent(engine, store, fast_path=fast_path)
    model_only, _, _ = build_agent(engine, demo_store())
    fast_times, model_times, handled = [], [], 0
    for number, (text, language) in enumerate(FAST_PATH_COMMANDS):
        seconds = await turn_seconds(with_fast, text, language, f"f{number}")
        if not engine.take():  # no model round: the fast path answered
            handled += 1
            fast_times.append(seconds)
            model_times.append(await turn_seconds(model_only, text, language, f"m{number}"))
            engine.take()
    await engine.close()
    share = handled / len(FAST_PATH_COMMANDS)
    fast_s, model_s = statistics.median(fast_times), statistics.median(model_times)
    return [Result("F  fast path share of the command set", share, "(info)",
                   f"{handled} of {len(FAST_PATH_COMMANDS)} commands in en/de/fr/es"),
            Result("F  fast path turn / model path turn, same commands", fast_s / model_s, "(info)",
                   f"{fast_s * 1000:.1f} ms vs {model_s:.2f} s (medians)")]


async def run_all(model: Path) -> list[Result]:
    engine = engine_for(model)
    results = p3_tokens(engine.count_tokens)
    await engine.close()
    results += await p4_first_token(model)
    results += await fast_path_share(model)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=None, help="GGUF file (default: Gemma 3 270M)")
    parser.add_argument("--threads", type=int, default=0, help="llama.cpp threads (0: all cores)")
    args = parser.parse_args()
    bench_cache.THREADS = args.threads
    print_results(asyncio.run(run_all(args.model or gemma3_270m_path())))


if __name__ == "__main__":
    main()
