"""Issue 16's 20 traps with each real stand-in model (SmolLM2-135M-Instruct, base Gemma 3 270M)
through the agent's turn entry: a named device the home lacks, one hidden by exposure or by the
allow-list (`exclude_entities`), or a name several devices fit. Each runs with the stand-in's
default (`model_home_control` off: the fast path acts, the model chats) and with the model
allowed to act (the fast path off, so the grammar-bound model meets every trap: each trap then
meets one of the two models, alternately, as the check is the hub's whichever model calls; each
model's turns there take seconds). Tiny models judge badly: what is asserted is the mechanism —
nothing acts on a wrong device, the reply is the hub's localized sentence, and the answer to
"which one?" finishes the command."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hub.home.entities import Entity
from hub.backends.ha.registry import EntityFilter
from hub.llm.llama_engine import LlamaEngine
from hub.locales import join_list, phrase, template

from async_policy.async_helpers import FakeClock, TestHub

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

HIDDEN = "light.floor_lamp"  # left out by the allow-list
NOT_FOUND = [  # (language, command, a word the reply names): the home has no such device
    # absent: a neighbour shares a word (garage door, kitchen light, bedroom light, desk lamp)
    ("en", "turn on the garage heater", "heater"),
    ("en", "switch on the bedroom fan", "fan"),
    ("en", "turn on the kitchen radio", "radio"),
    ("en", "turn on the front door light", "front door"),
    ("de", "Schalte die Garagenheizung ein", "Garagenheizung"),
    ("fr", "Allume la radio de la cuisine", "radio"),
    ("es", "Enciende el ventilador del dormitorio", "ventilador"),
    ("en", "turn off the desk heater", "heater"),
    # hidden by exposure: the front door lock is not exposed, the garage door is
    ("en", "unlock the front door", "front door"),
    ("en", "lock the front door", "front door"),
    ("en", "open the front door", "front door"),
    ("en", "close the front door please", "front door"),
    # hidden by the allow-list: the floor lamp, beside the living room light and the desk lamp
    ("en", "turn on the floor lamp", "floor lamp"),
    ("en", "turn on the standing lamp", "standing lamp"),
    ("en", "switch off the living room floor lamp", "floor lamp"),
    ("de", "Schalte die Stehlampe ein", "Stehlampe"),
]
WHICH_ONE = [  # (language, command, options, answer, the entity the answer names)
    ("en", "turn on the desk", ["Desk fan", "Desk lamp"], "the first one", "fan.desk_fan"),
    ("en", "turn on the Dyson", ["Dyson Attic", "Dyson Office"], "the office one", "fan.dyson_office"),
    ("de", "Schalte den Dyson ein", ["Dyson Attic", "Dyson Office"], "den zweiten", "fan.dyson_office"),
    ("fr", "Allume le Dyson", ["Dyson Attic", "Dyson Office"], "le premier", "fan.dyson_attic"),
]


def home(tmp_path: Path, engine: LlamaEngine, model_acts: bool) -> TestHub:
    hub = TestHub(tmp_path, engine, policy_clock=FakeClock(), model_home_control=model_acts,
                  fast_path=not model_acts, max_tokens=64, turn_timeout=180, exclude_entities=HIDDEN)
    hub.store.remove("lock.front_door")  # not exposed to the hub
    allowed = EntityFilter.from_options(hub.options.home_assistant)  # what the HA and MQTT sources apply
    for entity in hub.store.all():
        if not allowed.allows(entity.entity_id, True, None):
            hub.store.remove(entity.entity_id)
    for entity in (Entity("cover.garage_door", "Garage door", "closed", {}, (), None, "garage"),
                   Entity("fan.desk_fan", "Desk fan", "off", {}, (), "Office"),
                   Entity("fan.dyson_office", "Dyson Office", "off", {}, (), "Office"),
                   Entity("fan.dyson_attic", "Dyson Attic", "off", {}, (), "Attic")):
        hub.store.upsert(entity)
    assert HIDDEN not in hub.store and "lock.front_door" not in hub.store
    return hub


def not_found_name(language: str, reply: str) -> str | None:
    """The name in the hub's "I couldn't find {name}" sentence, None if the reply is not it."""
    pattern = re.escape(template(language, "entity.not_found")).replace(re.escape("{name}"), "(.+)")
    found = re.fullmatch(pattern, reply)
    return found.group(1) if found else None


def traps_for(model: str, model_acts: bool) -> tuple[list, list]:
    """All twenty with the stand-in's default; with the model acting, every other trap of each
    kind for SmolLM2 and the rest for Gemma (both halves: not-found in three languages or more, two
    "which one?" questions each)."""
    if not model_acts:
        return NOT_FOUND, WHICH_ONE
    half = 0 if model == "smollm" else 1
    return NOT_FOUND[half::2], WHICH_ONE[half::2]


def test_the_two_halves_are_the_twenty_traps() -> None:
    assert len(NOT_FOUND) + len(WHICH_ONE) == 20
    (smollm_nf, smollm_w), (gemma_nf, gemma_w) = traps_for("smollm", True), traps_for("gemma", True)
    assert sorted(smollm_nf + gemma_nf) == sorted(NOT_FOUND) and sorted(smollm_w + gemma_w) == sorted(WHICH_ONE)
    assert all(len({language for language, *_ in nf}) >= 3 for nf in (smollm_nf, gemma_nf))


@pytest.mark.parametrize("model_acts", [False, True], ids=["stand_in_default", "model_home_control"])
async def test_twenty_traps_act_on_no_wrong_device(tmp_path, request: pytest.FixtureRequest,
                                                   real_stand_in: LlamaEngine, model_acts: bool) -> None:
    not_found, which_one = traps_for(request.node.callspec.params["real_stand_in"], model_acts)
    tally = {"not found": 0, "which one": 0, "finished": 0}
    for n, (language, command, named) in enumerate(not_found):
        hub = home(tmp_path / f"nf{n}", real_stand_in, model_acts)
        assert hub.agent.model_acts is model_acts
        before = {e.entity_id: e.state for e in hub.store.all()}
        result = await hub.ask(command, conversation_id=f"nf{n}", language=language)
        assert hub.backend.calls == [], (command, hub.backend.calls)
        assert {e.entity_id: e.state for e in hub.store.all()} == before
        name = not_found_name(language, result.reply)
        assert name is not None and named in name, (command, result.reply)
        tally["not found"] += 1
    for n, (language, command, options, answer, chosen) in enumerate(which_one):
        hub = home(tmp_path / f"w{n}", real_stand_in, model_acts)
        asked = await hub.ask(command, conversation_id=f"w{n}", language=language)
        assert asked.reply == phrase(language, "entity.ambiguous", options=join_list(options, language)), command
        assert hub.backend.calls == [], "nothing acts before the answer"
        tally["which one"] += 1
        done = await hub.ask(answer, conversation_id=f"w{n}", language=language)
        assert [c[0] for c in hub.backend.calls] == [chosen], (command, answer, done.reply, done.tool_calls)
        assert hub.state(chosen) == "on" and done.ok
        assert done.reply == phrase(language, "action.turned_on", name=hub.store.get(chosen).name), done.reply
        tally["finished"] += 1
    print(f"{real_stand_in.info.name} ({'model acts' if model_acts else 'stand-in default'}): "
          f"{tally['not found']}/{len(not_found)} 'can't find', {tally['which one']}/{len(which_one)} 'which one', "
          f"{tally['finished']}/{len(which_one)} finished by the answer, 0 wrong-device actions")
