"""`bolt-hub check`'s memory budget: what `serve` will hold once every language can answer, part
by part, before it runs (the parts `hub.memory` measures: GET /api/memory, bench/bench_memory.py).

- the model's weights: the GGUF's size (its pages, read whole once the model has run);
- its KV cache: n_ctx tokens of every layer (`hub.llm.inspect`; llama.cpp allocates it whole);
- the prompt states: the stable prefix primed at start (`PRIMED_TOKENS` of KV); up to
  `prompt_cache_mib` as conversations come;
- the fast path: each language's templates and number words, from the size of their text: in
  full for the home's languages (the configured one and those its names are written in), compact
  for the others (`hub.understanding.warm_up`);
- the home: per language and per entity (the demo home when neither Home Assistant nor a broker
  is configured; else its entities are not known before it is reached, and count as none);
- the rest: the interpreter, the libraries, language identification, the hub's code, and
  llama.cpp's vocabulary and compute buffers as far as they are used (per vocabulary entry).

The constants were measured on the stand-ins (SmolLM2 and Gemma 3 270M at n_ctx 2048-8192, the
demo home; bench_memory.py prints the estimate beside what `serve` reached).
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from hub.backends.demo.home import DEMO_AREA_ALIASES, demo_entities
from hub.config import HubConfig
from hub.home.entities import EntityStore
from hub.llm.inspect import GGUFReport, SkippedArray, inspect_gguf
from hub.llm.models import resolve_model_path
from hub.locales import SUPPORTED_LANGUAGES
from hub.memory import MODEL_PARTS
from hub.understanding.recognition import compiled_inputs, intents_language
from hub.understanding.warm_up import home_languages

MIB = 2**20
PRIMED_TOKENS = 750  # the demo home's stable prefix (instructions, tools, the home's overview):
# 910 tokens of SmolLM2's vocabulary, 570 of Gemma's
COMPACT_PER_TEXT_BYTE = 8.7  # a compact language's templates and number words, per byte of their text
FULL_PER_TEXT_BYTE = 1.8  # what building every template of a language in full adds, per byte
HOME_PER_LANGUAGE = 200_000  # a language's index of the home's names and its area and floor lists
HOME_PER_ENTITY_LANGUAGE = 1_050  # an entity in each language's index
HOME_PER_ENTITY = 3_600  # an entity's names and their spoken forms
REST = 165 * MIB  # the interpreter, libraries, language identification, the hub's code
REST_PER_VOCABULARY_ENTRY = 190  # llama.cpp's vocabulary and its compute buffers as used


@dataclass(frozen=True)
class Budget:
    """What `serve` will hold (bytes) once every language can answer."""

    parts: dict[str, int]  # weights, kv_cache, prompt_states, fast_path, home
    rest: int
    languages: dict[str, str]  # each language: "full" or "compact"
    prompt_cache_cap: int

    @property
    def total(self) -> int:
        return sum(self.parts.values()) + self.rest

    @property
    def own(self) -> int:
        """The hub's own share: all but the model's weights, KV cache and prompt states."""
        return self.total - sum(self.parts[part] for part in MODEL_PARTS)

    def describe(self) -> list[str]:
        full = [code for code, kind in self.languages.items() if kind == "full"]
        lines = [f"{part.replace('_', ' ')}: {size / MIB:.0f} MiB" for part, size in self.parts.items()]
        lines[-1] += f" (and about {(HOME_PER_ENTITY + len(self.languages) * HOME_PER_ENTITY_LANGUAGE) / 1024:.0f} KiB " \
                     "more for each entity Home Assistant or MQTT adds)"
        return [f"memory once every language answers: {self.total / MIB:.0f} MiB, of which the hub's own "
                f"{self.own / MIB:.0f} MiB", *(f"  {line}" for line in lines),
                f"  the rest (interpreter, libraries, language identification): {self.rest / MIB:.0f} MiB",
                f"  languages in full: {', '.join(full)}; the other {len(self.languages) - len(full)} compact",
                f"  the prompt states grow to prompt_cache_mib ({self.prompt_cache_cap / MIB:.0f} MiB) as "
                f"conversations come"]


def estimate(config: HubConfig, report: GGUFReport | None = None) -> Budget:
    """The budget for `config`'s model (`report`: its header, read if not given), n_ctx and home."""
    values = config.values
    n_ctx = int(values["n_ctx"])
    if report is None:
        report = inspect_gguf(resolve_model_path(values.get("model_path"))[0], n_ctx=n_ctx,
                              kv_cache_type=str(values["kv_cache_type"]))
    kv_cache = report.kv_cache_bytes(n_ctx, str(values["kv_cache_type"]))
    entities, first = _home(config)
    languages = {code: "full" if code in first else "compact" for code in SUPPORTED_LANGUAGES}
    fast_path = sum(_language_bytes(code, kind == "full") for code, kind in languages.items())
    vocabulary = report.metadata.get("tokenizer.ggml.tokens")
    entries = vocabulary.length if isinstance(vocabulary, SkippedArray) else len(vocabulary or ())
    parts = {"weights": report.file_size, "kv_cache": kv_cache,
             "prompt_states": kv_cache * min(PRIMED_TOKENS, n_ctx) // n_ctx,
             "fast_path": fast_path, "home": _home_bytes(entities, len(languages))}
    return Budget(parts, REST + REST_PER_VOCABULARY_ENTRY * entries, languages,
                  int(values["prompt_cache_mib"]) * MIB)


def _home_bytes(entities: int, languages: int) -> int:
    return languages * (HOME_PER_LANGUAGE + HOME_PER_ENTITY_LANGUAGE * entities) + HOME_PER_ENTITY * entities


def _home(config: HubConfig) -> tuple[int, list[str]]:
    """The home's entity count and the languages prepared in full at start: the demo home's,
    unless Home Assistant or a broker gives another (then the configured language alone)."""
    language = str(config.values["language"])
    if config.values.get("ha_url") or config.values.get("mqtt_host") or config.in_addon:
        return 0, [language]
    store = EntityStore()
    for entity in demo_entities():
        store.upsert(entity)
    for area, aliases in DEMO_AREA_ALIASES.items():
        store.set_area_aliases(area, aliases)
    return len(store), home_languages(store, language)


def _language_bytes(language: str, full: bool) -> int:
    """A language's templates and number words, from the bytes of their text (the installed
    package's, the hub's own, the older release's)."""
    code = intents_language(language)
    if code is None:
        return 0
    package = resources.files("home_assistant_intents") / "data" / f"{code}.json"
    text = len(package.read_bytes()) if package.is_file() else 0
    for path in compiled_inputs(code)[:2]:
        text += _text_bytes(path)
    return round(text * (COMPACT_PER_TEXT_BYTE + (FULL_PER_TEXT_BYTE if full else 0.0)))


def _text_bytes(path: Path) -> int:
    if not path.is_file():
        return 0
    return len(gzip.decompress(path.read_bytes())) if path.suffix == ".gz" else path.stat().st_size
