"""A home of 1,000 entities: the prompt carries only the request's candidates (the best matches
with names, aliases and areas, the others with id and name, all with states), the grammar offers
only entities the prompt shows, and the prompt is no bigger than a 25-entity home's."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hub.agent.types import TurnRequest
from hub.home.context import OVERVIEW_MAX_ENTITIES
from hub.home.resolve import EntityResolver
from hub.home.view import StoreHomeView
from hub.llm.llama_engine import LlamaEngine

from perf.agent_rig import RecordingEngine, build_agent, demo_store, generated_store

ENTITY_ID = re.compile(r"\b[a-z_]+\.[a-z0-9_]+\b")


def test_overview_only_up_to_the_limit_then_candidates_carry_their_identity() -> None:
    small = generated_store(OVERVIEW_MAX_ENTITIES)
    view = StoreHomeView(small, EntityResolver(small))
    kitchen_lights = "Kitchen:\nlight.kitchen_ceiling_lamp (ceiling lamp 20)\nlight.kitchen_ceiling_light (ceiling light 0)\n"
    assert view.overview_fits and kitchen_lights in view.overview(small.all())
    assert view.live_states([small.get("light.kitchen_ceiling_light")]) == "light.kitchen_ceiling_light: off"

    big = generated_store(OVERVIEW_MAX_ENTITIES + 1)
    view = StoreHomeView(big, EntityResolver(big))
    assert not view.overview_fits and view.overview(big.all()) == ""
    lamp = big.get("light.attic_ceiling_lamp")
    assert view.live_states([lamp]) == "Attic:\nlight.attic_ceiling_lamp (ceiling lamp 28): off"


def test_best_matches_in_detail_the_other_candidates_by_id_and_name() -> None:
    store = generated_store(1000)
    view = StoreHomeView(store, EntityResolver(store))
    # "480" is part of one alias ("window socket 480", a Kitchen socket): the best match; the
    # attic's sockets and plugs (kind and area said) follow as other candidates
    match = view.match("switch on socket 480 in the attic", "en")
    found = match.candidates
    text = view.live_states(found, {e.entity_id for e in match.best})
    assert len(found) > 1 and text.startswith("Kitchen:\nswitch.kitchen_window_socket (window socket 480): off\n")
    others = text.split("Other candidates:\n", 1)[1].splitlines()
    assert sorted(line.split(":")[0] for line in others) == sorted(
        e.entity_id for e in found if e.entity_id != "switch.kitchen_window_socket")
    assert all("(" not in line for line in others)  # no aliases: fewer tokens
    # no best matches given (another caller): every candidate in detail
    assert "Other candidates" not in view.live_states(found[1:])


def test_an_entity_named_outright_comes_alone() -> None:
    """Partial word matches ("ceiling") are noise once a whole name was said: the prompt carries
    the named entity only, which is also all the grammar offers."""
    store = generated_store(1000)
    view = StoreHomeView(store, EntityResolver(store))
    match = view.match("turn on the attic ceiling light", "en")
    found = match.candidates
    assert [e.entity_id for e in found] == ["light.attic_ceiling_light"]
    assert found == match.best
    assert view.live_states(found, {e.entity_id for e in match.best}) == \
        "Attic:\nlight.attic_ceiling_light (ceiling light 8): off"
    # two names said: both, nothing else
    both = {e.entity_id for e in view.match("turn on the attic ceiling light and the gym desk fan", "en").candidates}
    assert both == {"light.attic_ceiling_light", "fan.gym_desk_fan"}
    # a name and, besides it, a kind of device in another area: every candidate stays
    more = {e.entity_id for e in view.match("turn on the kitchen ceiling light and the fans in the office", "en").candidates}
    assert {"light.kitchen_ceiling_light", "fan.office_ceiling_fan"} <= more


def test_small_home_request_carries_the_states_of_its_best_matches() -> None:
    store = demo_store()
    view = StoreHomeView(store, EntityResolver(store))
    def live(text: str) -> str:
        match = view.match(text, "en")
        return view.live_states(match.candidates, {e.entity_id for e in match.best})

    assert live("turn on the kitchen light") == "light.kitchen: off"
    lights = live("it's too dark in the living room")
    assert lights.splitlines() == ["light.floor_lamp: off", "light.living_room: on, brightness 71%"]


@pytest.mark.slow
async def test_thousand_entities_prompt_shows_what_the_grammar_offers(gemma_path: Path) -> None:
    engine = RecordingEngine(LlamaEngine(gemma_path, n_ctx=4096, seed=7))
    try:
        prompts, offered = {}, {}
        for size in (25, 1000):
            store = generated_store(size)
            agent, view, _ = build_agent(engine, store, max_tokens=96)  # a set_light call with all its fields fits
            result = await agent.ask(TurnRequest("turn on the attic ceiling light", conversation_id=f"a{size}"))
            first = engine.take()[0]
            system, user = first.request.messages[0].content, first.request.messages[-1].content
            constraint = first.request.constraint
            assert constraint is not None and constraint.entity_ids
            assert set(constraint.entity_ids) <= set(ENTITY_ID.findall(user))  # offered ⊆ shown
            match = view.match("turn on the attic ceiling light", "en")
            found = {e.entity_id for e in match.candidates}
            best = {e.entity_id for e in match.best}
            # a small home's overview names everything: the request adds its best matches' states;
            # a big home's request carries every candidate
            assert set(ENTITY_ID.findall(user)) == (found if size == 1000 else best)
            if size == 1000:
                assert not ENTITY_ID.search(system)  # no overview of a thousand entities
                assert "Attic:" in user and "(ceiling light" in user  # areas and aliases reach the model
            else:
                assert "light.attic_ceiling_light" in system  # small home: the overview
            calls = [c.call for c in result.tool_calls]
            assert calls and calls[0].arguments.get("entity_id") in constraint.entity_ids
            prompts[size] = first.usage.prompt_tokens
            offered[size] = {t.name: t for t in first.request.tools}
        # no bigger than the small home's, but for the tools of the kinds of device it lacks
        lacking = sum(engine.count_tokens(json.dumps({"name": t.name, "description": t.description,
                                                      "parameters": t.parameters}))
                      for name, t in offered[1000].items() if name not in offered[25])
        assert lacking > 0 and prompts[1000] - lacking <= prompts[25]
    finally:
        await engine.close()
