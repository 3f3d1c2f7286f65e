"""Resolution never swaps a device (issue 16): a small, grammar-bound model allowed to act
(`model_home_control`) on the demo home with a garage door and a desk fan added and the front
door lock hidden. The scripted model does what such a model does: it calls the first entity
the grammar offers. A name that fits nothing well gets "I couldn't find …" and no model round;
several good fits get "which one?", and the next turn's answer finishes the command."""

from __future__ import annotations

import pytest

from hub.home.entities import Entity
from hub.llm.types import GenerationRequest
from hub.locales import join_list, phrase

from async_policy.async_helpers import FakeClock, TestHub
from helpers.scripted_engine import ScriptedEngine, call, text

pytestmark = pytest.mark.timeout(60)


def grammar_model(request: GenerationRequest):
    """Acts on the first entity the grammar offers (what a small model mostly does)."""
    if request.constraint is None:
        return text("Done.")
    return [call("turn_on", entity_id=request.constraint.entity_ids[0])]


def home(tmp_path, rounds: int = 4) -> tuple[TestHub, ScriptedEngine]:
    engine = ScriptedEngine([grammar_model] * rounds, constrained=True)
    hub = TestHub(tmp_path, engine, policy_clock=FakeClock(), model_home_control=True)
    hub.store.remove("lock.front_door")  # hidden from the hub (not exposed)
    hub.store.upsert(Entity("cover.garage_door", "Garage door", "closed", {}, (), None, "garage"))
    hub.store.upsert(Entity("fan.desk_fan", "Desk fan", "off", {}, (), "Office"))
    return hub, engine


TRAPS = [  # (language, command, the words the reply names)
    ("en", "unlock the front door", "front door"),
    ("en", "open the front door", "front door"),
    ("en", "lock the front door please", "front door"),
    ("en", "turn on the garage heater", "garage heater"),
    ("en", "turn on the front door light", "front door light"),
    ("en", "turn off the desk heater", "desk heater"),
    ("en", "open the garage window", "garage window"),
    ("en", "turn on the coffee grinder", "coffee grinder"),
    ("en", "switch on the bedroom fan", "bedroom fan"),
    ("en", "turn on the kitchen radio", "kitchen radio"),
    ("en", "close the front blinds", "front blinds"),
    ("en", "start the good morning script", "good morning script"),
    ("en", "turn on the garage light", "garage light"),
    ("de", "Schalte die Garagenheizung ein", "Garagenheizung"),
    ("fr", "Allume la radio de la cuisine", "radio"),
    ("es", "Enciende el ventilador del dormitorio", "ventilador"),
]


@pytest.mark.parametrize("language,command,missing", TRAPS)
async def test_a_name_that_fits_nothing_well_acts_on_nothing(tmp_path, language, command, missing) -> None:
    hub, engine = home(tmp_path)
    before = {e.entity_id: e.state for e in hub.store.all()}
    result = await hub.ask(command, language=language)
    assert hub.backend.calls == [] and {e.entity_id: e.state for e in hub.store.all()} == before
    assert not any(f.ok for f in result.tool_calls)
    if missing is not None:
        assert result.reply.startswith(phrase(language, "entity.not_found", name="\0").split("\0")[0])
        assert missing in result.reply, result.reply


@pytest.mark.parametrize("language,command,answer,chosen", [
    ("en", "turn on the desk", "the second one", "light.desk_lamp"),
    ("en", "turn on the desk", "the first one", "fan.desk_fan"),
    ("en", "switch on the desk", "Desk lamp", "light.desk_lamp"),
    ("en", "turn on the desk", "the fan", "fan.desk_fan"),
    ("de", "Schalte den Schreibtisch ein", "die zweite", None),
])
async def test_several_good_fits_ask_which_one_and_the_answer_finishes_the_command(
        tmp_path, language, command, answer, chosen) -> None:
    hub, engine = home(tmp_path)
    asked = await hub.ask(command, language=language)
    if chosen is None:  # no German word names a desk here: nothing is offered, nothing happens
        assert hub.backend.calls == []
        return
    options = join_list(["Desk fan", "Desk lamp"], language)
    assert asked.reply == phrase(language, "entity.ambiguous", options=options)
    assert hub.backend.calls == [] and len(engine.requests) == 0, "nothing acts before the answer"
    done = await hub.ask(answer, language=language)
    assert [c[0] for c in hub.backend.calls] == [chosen]
    assert hub.state(chosen) == "on" and done.ok
    assert list(engine.requests[0].constraint.entity_ids) == [chosen], "the grammar offered only the choice"


async def test_the_answer_to_which_one_counts_only_from_the_asker(tmp_path) -> None:
    hub, _ = home(tmp_path)
    await hub.ask("turn on the desk", source="wyoming", client="wyoming:10.0.0.5/")
    await hub.ask("the second one", source="wyoming", client="wyoming:10.0.0.9/")
    assert hub.backend.calls == [], "a stranger's answer finishes nothing"
    await hub.ask("the second one", source="wyoming", client="wyoming:10.0.0.5/")
    assert [c[0] for c in hub.backend.calls] == ["light.desk_lamp"], "the asker's answer still does"


async def test_without_ids_the_answer_to_which_one_continues_the_conversation(tmp_path) -> None:
    hub, _ = home(tmp_path)
    asked = await hub.ask("turn on the desk", conversation_id=None, client="wyoming:10.0.0.5/")
    done = await hub.ask("the second one", conversation_id=None, client="wyoming:10.0.0.5/")
    assert done.conversation_id == asked.conversation_id
    assert hub.state("light.desk_lamp") == "on"
