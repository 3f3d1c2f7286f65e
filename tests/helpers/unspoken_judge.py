"""An independent judge of what users hear from the model: its own copy of what the model is
given in the demo home (system prompt, tool declarations, state lines, user-message head), not
the hub's filter. Shared by `bench/bench_unspoken.py` and the real-model tests of issue #28."""

from __future__ import annotations

import re

import py3langid

from hub.agent import prompt
from hub.backends.demo.home import load_demo_home
from hub.core.tools import ToolRegistry
from hub.home.catalogue import build_home_tools
from hub.home.entities import EntityStore
from hub.home.resolve import EntityResolver
from hub.home.view import StoreHomeView
from hub.llm.text_tools import text_tool_instructions

RUN = 6  # shared words in a row that count as reciting
MAX_REPLY_CHARS = 400  # the hub's default reply cap
_WORD = re.compile(r"\w+")
_ENTITY_ID = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)*\.[a-z0-9]+(?:_[a-z0-9]+)*\b")
_MARKUP = re.compile(r"<\|?/?[A-Za-z_]+\|?>|\[/?(?:INST|TOOL_CALLS|SYS)\]|^\s*(?:system|user|assistant|model|tool)\s*:",
                     re.IGNORECASE | re.MULTILINE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _words(text: str) -> list[str]:
    return _WORD.findall(re.sub(r"<[^<>]*>", " ", text).casefold().replace("_", " "))


def _runs(words: list[str]) -> set[tuple[str, ...]]:
    return {tuple(words[i:i + RUN]) for i in range(len(words) - RUN + 1)}


class Judge:
    """What the model is given in the demo home, and the checks of a reply against it."""

    def __init__(self) -> None:
        store = EntityStore()
        load_demo_home(store)
        resolver = EntityResolver(store)
        registry = ToolRegistry()
        for tool in build_home_tools(store, resolver):
            registry.register(tool)
        home = StoreHomeView(store, resolver)
        specs = registry.specs()
        given = [prompt.stable_system_message(home, True).content, prompt.stable_system_message(home, False).content,
                 text_tool_instructions(specs), home.live_states(list(store.all())),
                 *(prompt.user_message_head(code, "Monday 2026-11-30 08:00") for code in prompt.LANGUAGE_NAMES)]
        self.given_runs = set().union(*(_runs(_words(text)) for text in given))
        self.tool_names = {s.name for s in specs if "_" in s.name}
        self.entity_ids = {e.entity_id for e in store.all()}
        self.domains = {e.domain for e in store.all()} | {"sensor", "binary_sensor", "switch", "vacuum", "todo",
                                                           "weather", "calendar", "timer", "input_boolean"}

    def faults(self, reply: str, language: str) -> list[str]:
        found = []
        if _runs(_words(reply)) & self.given_runs:
            found.append("prompt")
        ids = [m for m in _ENTITY_ID.findall(reply) if m in self.entity_ids or m.split(".")[0] in self.domains]
        if ids:
            found.append("entity_id")
        if any(re.search(rf"\b{re.escape(name)}\b", reply) for name in self.tool_names):
            found.append("tool_name")
        if _MARKUP.search(reply):
            found.append("markup")
        if _loops(reply) or len(reply) > MAX_REPLY_CHARS:
            found.append("loop")
        if len(_words(reply)) >= 4 and py3langid.classify(reply)[0] != language:
            found.append("language")
        return found


def _loops(reply: str) -> bool:
    seen = set()
    for sentence in _SENTENCE_END.split(reply):
        key = tuple(w for w in _words(sentence) if len(w) > 1 and not w.isdigit())
        if key and key in seen:
            return True
        seen.add(key)
    return False
