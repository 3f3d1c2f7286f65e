"""Languages end to end through the real agent, the demo home and the real hassil fast path:
the hub's own phrases follow the request's language; unknown codes fall back to the default."""

from __future__ import annotations

from typing import Any

import pytest

from hub.agent.agent import Agent
from hub.agent.types import TurnRequest
from hub.config import validate
from hub.options import hub_options
from hub.home.catalogue import build_home_tools
from hub.backends.demo.home import load_demo_home
from hub.home.entities import EntityStore
from hub.understanding.fast_path import FastPath
from hub.home.resolve import EntityResolver
from hub.core.tools import ToolRegistry
from hub.home.view import StoreHomeView
from hub.locales import SUPPORTED_LANGUAGES, phrase
from hub.settings import RuntimeSettings
from helpers.scripted_engine import ScriptedEngine, text

pytestmark = pytest.mark.timeout(120)


class DemoHub:
    """The agent as the app builds it, over the demo home; the model is scripted (`rounds`)."""

    def __init__(self, rounds: list | None = None, **options: Any) -> None:
        self.config = validate(options)
        self.store = EntityStore()
        self.backend = load_demo_home(self.store)
        resolver = EntityResolver(self.store)
        registry = ToolRegistry()
        for tool in build_home_tools(self.store, resolver):
            registry.register(tool)
        self.engine = ScriptedEngine(rounds or [])
        self.agent = Agent(engine=self.engine, registry=registry, settings=RuntimeSettings(hub_options(self.config).settings),
                           options=hub_options(self.config).agent, home=StoreHomeView(self.store, resolver),
                           fast_path=FastPath(self.store, registry, resolver),
                           clock_text=lambda: "Monday 2026-11-30 08:00")

    def states(self) -> list[tuple[str, str]]:
        return [(e.entity_id, e.state) for e in self.store.all()]


@pytest.mark.parametrize("utterance, language, name, start", [
    ("Schalte den Kühlschrank aus", "de-DE", "Kühlschrank", "Entschuldigung"),
    ("Allume la télé du garage", "fr-FR", "télé du garage", "Pardon"),
])
async def test_entity_not_found_is_answered_in_the_requests_language(utterance, language, name, start) -> None:
    hub = DemoHub()  # no scripted rounds: the model must not be asked
    before = hub.states()
    result = await hub.agent.ask(TurnRequest(utterance, language=language, source="wyoming"))
    code = language[:2]
    assert result.ok and result.path == "fast_path" and result.language == code
    assert result.reply == phrase(code, "entity.not_found", name=name)
    assert result.reply.startswith(start) and result.reply != phrase("en", "entity.not_found", name=name)
    assert result.tool_calls == [] and hub.states() == before and hub.engine.requests == []


@pytest.mark.parametrize("unknown", ["xx-YY", "", "klingon", "!!"])
async def test_unknown_language_code_falls_back_to_the_configured_default(unknown: str) -> None:
    hub = DemoHub(language="de")
    result = await hub.agent.ask(TurnRequest("Schalte den Kühlschrank aus", language=unknown))
    assert result.ok and result.error is None and result.language == "de"
    assert result.reply == phrase("de", "entity.not_found", name="Kühlschrank")


async def test_unknown_language_reaches_the_model_as_the_default() -> None:
    hub = DemoHub([text("Bonjour.")], language="fr")
    result = await hub.agent.ask(TurnRequest("Raconte une blague", language="xx-YY"))
    assert result.ok and result.language == "fr" and result.reply == "Bonjour."
    [request] = hub.engine.requests
    assert "reply in French" in request.messages[-1].content


async def test_spoken_errors_follow_the_language_for_every_supported_language() -> None:
    hub = DemoHub()
    for language in SUPPORTED_LANGUAGES:
        result = await hub.agent.ask(TurnRequest("   ", language=language))  # an empty request
        assert not result.ok and result.error == "empty" and result.language == language
        assert result.reply == phrase(language, "error.empty")


async def test_a_few_words_no_template_takes_keep_the_named_language(tmp_path) -> None:
    """Issue #28 point 6: nonsense with one Dutch-looking word, named English, is answered in
    English by the model; a whole Dutch sentence named English is still answered in Dutch."""
    from hub.understanding import language as language_id

    from async_policy.async_helpers import TestHub
    from helpers.scripted_engine import ScriptedEngine, text

    assert await language_id.prepare()
    hub = TestHub(tmp_path, ScriptedEngine([text("Hm?"), text("Goed.")]))
    assert language_id.candidates("blorp zibble wat", "en", "en")[0] == "nl"
    assert (await hub.ask("blorp zibble wat", language="en")).language == "en"
    result = await hub.ask("wat is de hoofdstad van Frankrijk eigenlijk", conversation_id="c2", language="en")
    assert result.language == "nl"
