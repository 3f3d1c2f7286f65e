"""The hub's judge of spoken replies (`hub.agent.judge`) over the demo home, as the benches and
tests hear a served hub: what the model is given there (system prompt, tool declarations, state
lines, the user message's head) for the "prompt" kinds, the hub's language identification, and
what the turn read. Shared by `bench/bench_unspoken.py` and the real-model tests."""

from __future__ import annotations

import json
from typing import Any, Iterable

from hub.agent import prompt
from hub.agent.judge import KINDS, ReplyJudge
from hub.agent.prompt_echo import PromptEcho
from hub.backends.demo.home import load_demo_home
from hub.core.tools import ToolRegistry
from hub.home.catalogue import build_home_tools
from hub.home.entities import EntityStore
from hub.home.resolve import EntityResolver
from hub.home.view import StoreHomeView
from hub.llm.text_tools import text_tool_instructions
from hub.locales import phrase
from hub.understanding.language import TextLanguages

__all__ = ["KINDS", "Judge", "is_fallback", "read_of"]


class Judge:
    """What the model is given in the demo home, and the hub's judge of a reply against it."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        """`names`: the served home's names (entities, areas), beside the demo home's."""
        store = EntityStore()
        load_demo_home(store)
        resolver = EntityResolver(store)
        registry = ToolRegistry()
        for tool in build_home_tools(store, resolver):
            registry.register(tool)
        home = StoreHomeView(store, resolver)
        specs = registry.specs()
        declared = text_tool_instructions(specs)
        heads = [prompt.user_message_head(code, "Monday 2026-11-30 08:00") for code in prompt.LANGUAGE_NAMES]
        self._given = [prompt.stable_system_message(home, True).content,
                       prompt.stable_system_message(home, False).content, declared,
                       home.live_states(list(store.all())), *heads]
        self._instructions = [prompt.ASSISTANT_INSTRUCTIONS, prompt.CONVERSATIONAL_INSTRUCTIONS,
                              prompt.WRITTEN_INSTRUCTIONS, declared, prompt.OVERVIEW_HEADING, prompt.STATES_HEADING,
                              *heads]
        self._tool_names = [s.name for s in specs]
        self._entity_ids = [e.entity_id for e in store.all()]
        self._identify = TextLanguages()
        self._names = [*names, *(n for e in store.all() for n in (e.name, e.area or "", *e.aliases))]

    def judge(self, request: str, language: str, read: Iterable[str] = ()) -> ReplyJudge:
        echo = PromptEcho(given=self._given, instructions=self._instructions, request=request,
                          tool_names=self._tool_names, entity_ids=self._entity_ids)
        return ReplyJudge(language, request, echo=echo, read=read, identify=self._identify, names=self._names)

    def faults(self, reply: str, language: str, request: str, read: Iterable[str] = ()) -> list[str]:
        """The kinds of fault of `reply` to `request` (`hub.agent.judge.KINDS`)."""
        return self.judge(request, language, read).faults(reply)


def read_of(answer: dict[str, Any]) -> list[str]:
    """What a turn answered over REST (`/api/ask`) read: its calls' results and, when the hub
    answered without the model or instead of it (its fallback), its own answer (composed from
    what it read)."""
    read = [json.dumps(call.get("result") or {}, ensure_ascii=False) for call in answer.get("tool_calls") or []]
    return read if answer.get("path") == "model" and not is_fallback(answer) else [*read, answer.get("reply") or ""]


def is_fallback(answer: dict[str, Any]) -> bool:
    """Whether a model turn's reply is the hub's fallback (the model's reply was not spoken)."""
    language = answer.get("language") or "en"
    return answer.get("path") == "model" and (answer.get("reply") or "").startswith(
        (phrase(language, "reply.withheld"), phrase(language, "error.not_understood")))
