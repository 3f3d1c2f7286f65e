"""Languages kept compact (issue #43 point 2): a template compiled on use matches exactly as
hassil's parsed one, in full or compact; compiled templates and the identifier's table kept on
disk; number words as hassil's tries find them; the languages heard prepared in full, a bounded
few."""

from __future__ import annotations

import asyncio
import pickle
from array import array
from pathlib import Path
from typing import Any

import pytest
import yaml
from hassil.intents import Intents, RangeSlotList, TextSlotList
from hassil.parse_expression import parse_sentence
from hassil.filter import filter_intents
from hassil.recognize import recognize_all
from hassil.string_matcher import _RANGE_TRIE_CACHE, _build_range_trie

from hub.memory import object_bytes
from hub.understanding import recognition, template_cache, warm_up
from hub.understanding.compact_templates import RECENT_TREES, CompiledOnUse, Shared, recently_unpacked, rules, templates

from hub.understanding.number_words import NumberWords, compact_number_words
from hub.understanding.preparation import keep_built
from hub.understanding.warm_up import FastPathWarmUp
from hub.home.entities import EntityStore

SUITE = Path(__file__).resolve().parent / "ohf_intents_tests"


def _parsed(code: str) -> tuple[Intents, ...]:
    """The language's handled intents as hassil parses them, every template a tree."""
    data = recognition.get_intents(code)
    releases = (recognition.add_own_sentences(data, code), recognition.older_intents(code))
    return tuple(filter_intents(recognition._kinds_as_slots(Intents.from_dict(d)),
                                intent_names=recognition.HANDLED_INTENTS) for d in releases if d)


def _read(results: Any) -> list[tuple[str, str | None, dict[str, Any]]]:
    return [(r.intent.name, r.intent_sentence.text if r.intent_sentence else None,
             {k: e.value for k, e in r.entities.items()}) for r in results]


def test_templates_compiled_on_use_match_as_hassil_parsed_them() -> None:
    """German, both releases: HA's own test sentences give the same matches, the same templates
    and slots, from the parsed templates, the compact ones and the ones built in full."""
    parsed = _parsed("de")
    loaded = recognition.load_intents.__wrapped__("de")
    files = [yaml.safe_load(path.read_text(encoding="utf-8")) for path in sorted((SUITE / "de").glob("*/*.yaml"))[::16]]
    texts = [sentence for found in files for test in found["tests"][:1] for sentence in test["sentences"][:2]]
    lists = {kind: TextSlotList.from_strings(sorted({str(item["name"]) for found in files
                                                    for item in found.get(key) or ()}), name=kind)
             for kind, key in (("name", "entities"), ("area", "areas"), ("floor", "floors"))}
    assert len(texts) > 15
    every = list(templates(loaded.intents[0]))
    assert every and all(isinstance(s, CompiledOnUse) and s.pinned is None for s in every)
    for keep in (False, True):
        keep_built(loaded, keep)
        assert all((s.pinned is not None) == keep for s in every)
        assert all(rule.pinned is not None for rule in rules(loaded.intents[0])), "rules: built either way"
        for text in texts:
            for reference, compiled in zip(parsed, loaded.intents):
                expected = _read(recognize_all(text, reference, slot_lists=lists, language="de"))
                assert _read(recognize_all(text, compiled, slot_lists=lists, language="de")) == expected, text
    built = object_bytes([loaded])
    keep_built(loaded, False)
    assert object_bytes([loaded]) < built, "compact again: the trees let go"


def test_a_compact_template_reached_again_is_not_rebuilt() -> None:
    """Matching reaches the same templates command after command: their trees are kept built
    (a bounded number of them), not rebuilt each time (a quarter of a compact language's turn)."""
    first, second = (Shared().sentence(parse_sentence(text), {}) for text in ("turn on [the] {name}", "open {name}"))
    assert first.pinned is None and first.expression is first.expression
    assert first.expression is not second.expression
    assert recently_unpacked.cache_info().maxsize == RECENT_TREES


def test_compiled_templates_are_kept_on_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             caplog: pytest.LogCaptureFixture) -> None:
    built: list[str] = []
    source = tmp_path / "own.yaml"
    source.write_text("first")

    def build(code: str) -> dict[str, str]:
        built.append(code)
        return {"code": code, "from": source.read_text()}

    monkeypatch.setattr(template_cache, "_folder", None)
    assert template_cache.compiled("xx", build, [source]) == {"code": "xx", "from": "first"}
    template_cache.use(tmp_path / "compiled")
    try:
        assert template_cache.compiled("xx", build, [source]) == {"code": "xx", "from": "first"}
        assert template_cache.compiled("xx", build, [source]) == {"code": "xx", "from": "first"}
        assert built == ["xx", "xx"], "the second start read it"
        source.write_text("second")  # an input changed: made again
        assert template_cache.compiled("xx", build, [source])["from"] == "second" and len(built) == 3
        (tmp_path / "compiled" / "xx.pickle").write_bytes(pickle.dumps("garbage")[:5])
        assert template_cache.compiled("xx", build, [source])["from"] == "second" and len(built) == 4
        assert "unreadable" in caplog.text
        table = array("I", range(1000))
        mapped = template_cache.mapped("table-v1", table)
        assert mapped is not table and list(mapped) == list(table) and mapped[999] == 999
    finally:
        template_cache.use(None)
    assert template_cache.mapped("table-v1", table) is table


def test_number_words_are_found_as_hassils_trie_finds_them() -> None:
    loaded = recognition.load_intents("fr")
    ranges = [r for intents in loaded.intents for r in intents.slot_lists.values()
              if isinstance(r, RangeSlotList) and r.words]
    trie = _build_range_trie("fr", ranges[0])
    compact = NumberWords(trie)
    for text in ["vingt et un pour cent", "Règle sur QUATRE-VINGT-DIX", "dix-sept degrés", "rien", "cent", ""]:
        assert list(compact.find(text, ignore_case=True)) == list(trie.find(text, ignore_case=True)), text
    assert object_bytes([compact]) < object_bytes([trie]) / 5
    _RANGE_TRIE_CACHE["test-xx"][(0, 1, 1, None)] = trie  # as hassil's matcher leaves one
    try:
        compact_number_words()
        assert isinstance(_RANGE_TRIE_CACHE["test-xx"][(0, 1, 1, None)], NumberWords)
    finally:
        del _RANGE_TRIE_CACHE["test-xx"]


class _Languages:
    """A fast path that records what it was asked to prepare, and hears what a test says."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, bool]] = []
        self.said: list[str] = []

    async def prepare(self, language: str, full: bool = False) -> bool:
        self.asked.append((language, full))
        return True

    def heard(self) -> list[str]:
        return list(self.said)


async def test_the_languages_heard_are_kept_in_full_a_few_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(warm_up, "_read_words", lambda language: None)
    monkeypatch.setattr(warm_up, "_settle_heap", lambda: None)
    store = EntityStore()
    languages = _Languages()
    warming = FastPathWarmUp(languages, store, "en", settle_s=0.05)
    await warming.start()
    try:
        await asyncio.wait_for(warming.wait_background(), 30)
        assert languages.asked[0] == ("en", True) and all(not full for _, full in languages.asked[1:])
        for said, kept in [(["sv"], ["en", "sv"]), (["sv", "da", "it"], ["en", "da", "it"]), (["en"], ["en"])]:
            languages.said = said
            for _ in range(100):
                if warming.full == kept:
                    break
                await asyncio.sleep(0.05)
            assert warming.full == kept, said
        assert ("sv", False) in languages.asked[languages.asked.index(("sv", True)):], "heard less recently: compact"
    finally:
        await warming.stop()
