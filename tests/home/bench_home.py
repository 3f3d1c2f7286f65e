"""Micro benchmark of home understanding (not a test): `python -m tests.home.bench_home`.

Prints resolver latency at 1,000 entities, fast path latency per utterance, and prompt tokens
per entity of the hub's overview/live states against Home Assistant's LLM context YAML
(the static overview and GetLiveContext of homeassistant/helpers/llm.py) for the same entities.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from dataclasses import replace
from decimal import Decimal
from enum import Enum
from typing import Any, Callable

import yaml

from hub.home.catalogue import build_home_tools
from hub.home.context import entity_overview, live_states
from hub.backends.demo.home import DEMO_AREA_ALIASES, DemoBackend, demo_entities, load_demo_home
from hub.home.entities import Entity, EntityStore
from hub.understanding.fast_path import FastPath
from hub.home.resolve import EntityResolver
from hub.core.tools import ToolContext, ToolRegistry
from tests.home.generated_home import generated_entities

UTTERANCES = [
    ("turn on the kitchen light", "en"), ("switch off the floor lamp", "en"),
    ("set the kitchen light to 40%", "en"), ("set the bedroom blinds to 30%", "en"),
    ("Schalte das Licht in der Küche ein", "de"), ("Allume la lumière de la cuisine", "fr"),
    ("Éteins la lampe du salon", "fr"), ("Enciende la luz de la cocina", "es"),
    ("it's too dark in the living room", "en"), ("what's the weather like tomorrow", "en"),
    ("Wie spät ist es?", "de"), ("Quelle heure est-il ?", "fr"),
]
# HA's `interesting_attributes` in _get_exposed_entities
HA_ATTRIBUTES = {"temperature", "current_temperature", "temperature_unit", "brightness", "humidity",
                 "unit_of_measurement", "device_class", "current_position", "percentage",
                 "volume_level", "media_title", "media_artist", "media_album_name"}


def median_ms(run: Callable[[], Any], repeat: int = 50) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def home_with(extra: int) -> EntityStore:
    store = EntityStore()
    load_demo_home(store)
    if extra:
        store.register_backend("generated", DemoBackend(store))
        for entity in generated_entities(extra):
            store.upsert(replace(entity, source="generated"))
    return store


def bench_resolver() -> None:
    store = home_with(1000)
    resolver = EntityResolver(store)
    start = time.perf_counter()
    resolver.candidates("warm", "en")
    print(f"resolver index build, {len(store)} entities: {(time.perf_counter() - start) * 1000:.1f} ms")
    for text, language in UTTERANCES:
        ms = median_ms(lambda: resolver.candidates(text, language))
        print(f"  candidates {ms:6.3f} ms  {text!r}")
    print(f"  resolve(name) {median_ms(lambda: resolver.resolve(name='attic desk lamp')):.3f} ms, "
          f"resolve(area, domain) {median_ms(lambda: resolver.resolve(area='Küche', domain='light', language='de')):.3f} ms, "
          f"resolve(partial name) {median_ms(lambda: resolver.resolve(name='desk lamp')):.3f} ms")


async def bench_fast_path(extra: int) -> None:
    store = home_with(extra)
    resolver = EntityResolver(store)
    registry = ToolRegistry()
    for tool in build_home_tools(store, resolver):
        registry.register(tool)
    fast_path = FastPath(store, registry, resolver)
    for language in ("en", "de", "fr", "es"):
        start = time.perf_counter()
        await fast_path.prepare(language)
        print(f"fast path prepare {language}: {(time.perf_counter() - start) * 1000:.0f} ms")
    medians = []
    print(f"fast path per utterance, {len(store)} entities (recognition + tool calls):")
    for text, language in UTTERANCES:
        times, outcome = [], None
        for _ in range(15):
            start = time.perf_counter()
            outcome = await fast_path.try_handle(text, language, ToolContext("bench", language=language))
            times.append(time.perf_counter() - start)
        medians.append(statistics.median(times))
        calls = "model" if outcome is None else f"{len(outcome.calls)} call(s)"
        print(f"  {medians[-1] * 1000:6.2f} ms  {text!r} → {calls}")
    print(f"  median {statistics.median(medians) * 1000:.2f} ms, max {max(medians) * 1000:.2f} ms")


def ha_context_yaml(entities: list[Entity], area_aliases: dict[str, tuple[str, ...]],
                    include_state: bool) -> str:
    """The shape of HA's static overview (include_state=False) and GetLiveContext YAML."""
    rows = []
    for entity in sorted(entities, key=lambda e: e.name):
        info: dict[str, Any] = {"names": ", ".join((entity.name, *entity.aliases)),
                                "domain": entity.domain}
        if include_state:
            info["state"] = entity.state
        if entity.area:
            info["areas"] = ", ".join((entity.area, *area_aliases.get(entity.area, ())))
        attributes = {k: (str(v) if isinstance(v, (Enum, Decimal, int)) else v)
                      for k, v in entity.attributes.items() if k in HA_ATTRIBUTES}
        if entity.device_class:
            attributes.setdefault("device_class", entity.device_class)
        if include_state and attributes:
            info["attributes"] = {k: list(v) if isinstance(v, tuple) else v
                                  for k, v in attributes.items()}
        rows.append(info)
    return yaml.dump(rows, default_flow_style=False, allow_unicode=True, sort_keys=False)


def tokenizer() -> tuple[str, Callable[[str], int]]:
    try:
        import llama_cpp
        from hub.llm.models import gemma3_270m_path

        model = llama_cpp.Llama(str(gemma3_270m_path()), vocab_only=True, verbose=False)
        return "Gemma 3 tokenizer (llama_cpp, vocab only)", lambda text: len(
            model.tokenize(text.encode(), add_bos=False, special=False))
    except Exception as err:  # no llama_cpp or no model: a rough proxy
        return f"characters/4 proxy ({err})", lambda text: len(text) // 4


def bench_tokens() -> None:
    name, count = tokenizer()
    print(f"prompt tokens ({name}):")
    homes = [("demo home", demo_entities(), dict(DEMO_AREA_ALIASES)),
             ("generated home", generated_entities(1000), {})]
    for label, entities, aliases in homes:
        n = len(entities)
        ours_static = count(entity_overview(entities, aliases))
        ours_live = count(live_states(entities))
        ha_static = count(ha_context_yaml(entities, aliases, include_state=False))
        ha_live = count(ha_context_yaml(entities, aliases, include_state=True))
        print(f"  {label} ({n} entities): overview {ours_static / n:.1f}/entity "
              f"(HA static YAML {ha_static / n:.1f}); live states {ours_live / n:.1f}/entity; "
              f"overview + live {(ours_static + ours_live) / n:.1f} vs HA GetLiveContext "
              f"{ha_live / n:.1f}/entity")


def main() -> None:
    bench_resolver()
    asyncio.run(bench_fast_path(0))
    asyncio.run(bench_fast_path(1000))
    bench_tokens()


if __name__ == "__main__":
    main()
