"""A model's device action runs only when it fits the request's words (issue #28 point 5).

A scripted model, allowed to act and unconstrained (as a real model through the OpenAI route),
makes the mistakes small models make: it turns on what it was asked to turn off, acts on a
device the request never spoke of, picks one of several equal fits. None of those calls runs;
the user is asked. Calls that fit still run: the same commands with the right call carry out.
Directions are checked in all 35 languages on sentences sampled from each language's Home
Assistant templates (tests/understanding/harness.py), over its own test home.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from hub.agent.call_fit import DOES_NOT_FIT
from hub.understanding import action_words as words
from hub.agent.types import TurnRequest, TurnResult
from hub.home.entities import Entity
from hub.llm.types import GenerationRequest
from hub.locales import SUPPORTED_LANGUAGES, join_list, phrase

from async_policy.async_helpers import FakeClock, TestHub
from helpers.scripted_engine import ScriptedEngine, call, text
from tests.understanding.harness import Rig, home_for, sample_cases

pytestmark = pytest.mark.timeout(300)

OPPOSITE = {"turn_on": "turn_off", "turn_off": "turn_on"}
SERVICE_TOOL = {"turn_on": "turn_on", "open_cover": "turn_on", "lock": "turn_on", "start": "turn_on",
                "turn_off": "turn_off", "close_cover": "turn_off", "unlock": "turn_off",
                "return_to_base": "turn_off"}


class Puppet:
    """Each round: the calls set in `next` (then words); records what it was asked."""

    def __init__(self) -> None:
        self.next: list[tuple[str, dict[str, Any]]] = []
        self.engine = ScriptedEngine([self._round] * 500)

    def _round(self, request: GenerationRequest) -> list:
        calls, self.next = self.next, []
        return [call(name, **args) for name, args in calls] if calls else text("Done.")


def refused(result: TurnResult) -> list[str]:
    return [str(f.data.get("reason")) for f in result.tool_calls if f.data.get("error") == DOES_NOT_FIT]


def demo(tmp_path, *entities: Entity) -> tuple[TestHub, Puppet]:
    puppet = Puppet()
    hub = TestHub(tmp_path, puppet.engine, policy_clock=FakeClock(), model_home_control=True)
    for entity in entities:
        hub.store.upsert(entity)
    return hub, puppet


def _cases(language: str) -> list:
    return [c for c in sample_cases(language, 4, seed=28, intents=("HassTurnOn", "HassTurnOff"))
            if c.expected.calls]


@pytest.mark.parametrize("language", SUPPORTED_LANGUAGES)
async def test_an_action_the_other_way_never_runs_in_any_language(language: str) -> None:
    """Sampled turn-on/turn-off commands (lights, fans, covers, vacuums, …): the model calls
    the opposite on the very devices meant. Wherever the language's template words say a way,
    nothing runs and the user is asked; a sentence whose words say no way at all (the
    templates' odd samples: "Kökes Taklampames ljuskällorna") leaves the model's reading
    standing, and is counted."""
    puppet = Puppet()
    cases = _cases(language)
    assert len(cases) >= 3, "the sample covers the language's on and off commands"
    ran: list[str] = []
    reasons: Counter[str] = Counter()
    async with Rig(home_for(language), fast_path=False, engine=puppet.engine) as rig:
        for case in cases:
            puppet.next = [(OPPOSITE[SERVICE_TOOL[service]], {"entity_id": entity_id})
                           for entity_id, service, _ in case.expected.calls]
            rig.backend.calls.clear()
            result = await rig.agent.ask(TurnRequest(case.text, language=language, source="rest"))
            domains = {entity_id.split(".")[0] for entity_id, _, _ in case.expected.calls}
            either_way = {case.intent, words.OPPOSITES[case.intent]}
            if rig.backend.calls:
                reasons["ran"] += 1
                if any(words.said_intents(case.text, language, d) & either_way for d in domains):
                    ran.append(f"{case.text!r}: {rig.backend.calls}")
            else:
                assert refused(result), (case.text, result.reply)
                reasons.update(refused(result)[:1])
            rig.agent.clear_conversations()
    print(f"{language}: {len(cases)} commands, the other way: {dict(reasons)}")
    assert ran == [], "\n".join(ran)


# The right call carried out, of the 8 sampled (a ratchet: raise it when the hub does better).
# What holds the rest back is reading the target in the templates' odd samples: a floor named
# ("ouvre l'Rez-de-chaussée"), inflections the resolver misses ("Kökes Taklampames"), a room
# alone with two kinds of device in it ("allume Cuisine": which one?).
STILL_RUNS = {"en": 6, "de": 4, "fr": 3, "es": 7, "nl": 5, "it": 5, "pl": 4, "pt": 4, "sv": 2, "ja": 7, "zh": 6}


@pytest.mark.parametrize("language", list(STILL_RUNS))
async def test_the_right_action_on_the_device_meant_still_runs(language: str) -> None:
    puppet = Puppet()
    done, cases = 0, _cases(language)
    async with Rig(home_for(language), fast_path=False, engine=puppet.engine) as rig:
        for case in cases:
            puppet.next = [(SERVICE_TOOL[service], {"entity_id": entity_id})
                           for entity_id, service, _ in case.expected.calls]
            rig.backend.calls.clear()
            result = await rig.agent.ask(TurnRequest(case.text, language=language, source="rest"))
            done += bool(rig.backend.calls) and not refused(result)
            rig.agent.clear_conversations()
    print(f"{language}: {done}/{len(cases)} fitting calls carried out")
    assert done >= STILL_RUNS[language]


GARDEN = Entity("light.garden", "Garden light", "off", {}, (), "Front yard")


@pytest.mark.parametrize("wrong", [("turn_on", "direction"), ("turn_off", "target")])
async def test_turn_off_the_water_never_turns_on_a_garden_light(tmp_path, wrong) -> None:
    """The issue's case: a request about water the home does not have; the only device of the
    area it names is a light."""
    hub, puppet = demo(tmp_path, GARDEN)
    puppet.next = [(wrong[0], {"entity_id": "light.garden"})]
    result = await hub.ask("turn off the water in the front yard")
    assert hub.backend.calls == [] and hub.state("light.garden") == "off"
    assert refused(result) == [wrong[1]]
    expected = (phrase("en", "fit.other_action", name="Garden light") if wrong[1] == "direction"
                else phrase("en", "entity.not_found", name="water"))
    assert result.reply == expected


@pytest.mark.parametrize("language,command", [
    ("en", "switch the kitchen light off"), ("de", "Schalte das Licht in der Küche aus"),
    ("fr", "Éteins la lumière de la cuisine"), ("es", "Apaga la luz de la cocina"),
    ("nl", "Doe de keukenlamp uit"), ("it", "Spegni la luce della cucina"),
])
async def test_off_words_never_turn_a_light_on(tmp_path, language, command) -> None:
    hub, puppet = demo(tmp_path)
    puppet.next = [("turn_on", {"entity_id": "light.kitchen"}), ("set_light", {"entity_id": "light.kitchen",
                                                                              "brightness": 80})]
    result = await hub.ask(command, language=language)
    assert hub.calls_to("light.kitchen") == [] and hub.state("light.kitchen") == "off"
    assert result.reply == phrase(language, "fit.other_action", name="Kitchen light")


@pytest.mark.parametrize("language,command", [("en", "turn off the heating"), ("de", "Schalte die Heizung aus")])
async def test_a_temperature_set_never_answers_turn_off(tmp_path, language, command) -> None:
    """A call that only sets a value goes no way: "off" is not 21 degrees (Gemma 3 270M's answer)."""
    hub, puppet = demo(tmp_path)
    puppet.next = [("set_temperature", {"entity_id": "climate.living_room", "temperature": 21})]
    result = await hub.ask(command, language=language)
    assert hub.calls_to("climate.living_room") == []
    assert result.reply == phrase(language, "fit.other_action", name="Living room thermostat")
    puppet.next = [("set_temperature", {"entity_id": "climate.living_room", "temperature": 21})]
    await hub.ask("set the living room thermostat to 21 degrees", language="en", conversation_id="set")
    assert [service for _, service, _ in hub.calls_to("climate.living_room")] == ["set_temperature"]


LOCKS = (Entity("lock.front_door", "Front door", "unlocked", {}, (), "Hallway"),
         Entity("lock.back_door", "Back door", "unlocked", {}, (), "Garden"))


async def test_lock_the_door_with_two_door_locks_asks_which_and_the_answer_locks_that_one(tmp_path) -> None:
    hub, puppet = demo(tmp_path, *LOCKS)
    puppet.next = [("turn_on", {"entity_id": "lock.front_door"})]
    asked = await hub.ask("lock the door")
    assert hub.backend.calls == [] and refused(asked) == ["which"]
    assert asked.reply == phrase("en", "entity.ambiguous", options=join_list(["Back door", "Front door"], "en"))
    puppet.next = [("turn_on", {"entity_id": "lock.back_door"})]
    done = await hub.ask("the back door")
    assert hub.backend.calls == [("lock.back_door", "lock", {})] and done.ok


async def test_a_choice_answered_with_another_device_runs_nothing(tmp_path) -> None:
    hub, puppet = demo(tmp_path, *LOCKS)
    puppet.next = [("turn_on", {"entity_id": "lock.front_door"})]
    await hub.ask("lock the door")
    puppet.next = [("turn_on", {"entity_id": "lock.front_door"})]  # the model ignores the answer
    result = await hub.ask("the back door")
    assert hub.backend.calls == [] and refused(result) == ["target"]


async def test_all_the_doors_locks_both(tmp_path) -> None:
    hub, puppet = demo(tmp_path, *LOCKS)
    puppet.next = [("turn_on", {"entity_id": "lock.front_door"}), ("turn_on", {"entity_id": "lock.back_door"})]
    await hub.ask("lock all the doors")
    assert sorted(c[0] for c in hub.backend.calls) == ["lock.back_door", "lock.front_door"]


async def test_the_fast_path_asks_which_door_too(tmp_path) -> None:
    hub, puppet = demo(tmp_path, *LOCKS)
    hub = TestHub(tmp_path, puppet.engine, policy_clock=FakeClock(), model_home_control=True, fast_path=True)
    for entity in LOCKS:
        hub.store.upsert(entity)
    for command in ("lock the door", "unlock the door"):
        result = await hub.ask(command, conversation_id=command)
        assert hub.backend.calls == [], command
        assert result.reply == phrase("en", "entity.ambiguous", options=join_list(["Back door", "Front door"], "en")), \
            (command, result.reply)


async def test_it_is_what_the_conversation_last_acted_on(tmp_path) -> None:
    hub, puppet = demo(tmp_path)
    puppet.next = [("turn_on", {"entity_id": "light.kitchen"})]
    await hub.ask("turn on the kitchen light")
    assert hub.state("light.kitchen") == "on"
    puppet.next = [("turn_off", {"entity_id": "light.bedroom"})]
    wrong = await hub.ask("turn it off")
    assert hub.calls_to("light.bedroom") == [] and refused(wrong) == ["target"]
    puppet.next = [("turn_off", {"entity_id": "light.kitchen"})]
    await hub.ask("turn it off")
    assert hub.state("light.kitchen") == "off"


async def test_it_with_nothing_to_refer_to_runs_nothing(tmp_path) -> None:
    hub, puppet = demo(tmp_path)
    puppet.next = [("turn_off", {"entity_id": "light.living_room"})]
    result = await hub.ask("turn it off")
    assert hub.backend.calls == [] and refused(result) == ["target"]
    assert result.reply == phrase("en", "fit.which_device")


async def test_the_light_is_the_one_in_the_speakers_room(tmp_path) -> None:
    hub, puppet = demo(tmp_path)
    puppet.next = [("turn_on", {"entity_id": "light.kitchen"})]
    wrong = await hub.ask("turn on the light", area="Bedroom")
    assert hub.backend.calls == [] and refused(wrong) == ["target"]
    puppet.next = [("turn_on", {"entity_id": "light.bedroom"})]
    await hub.ask("turn on the light", area="Bedroom", conversation_id="c2")
    assert hub.state("light.bedroom") == "on"


async def test_the_light_without_a_room_is_one_of_several(tmp_path) -> None:
    hub, puppet = demo(tmp_path)
    puppet.next = [("turn_on", {"entity_id": "light.kitchen"})]
    result = await hub.ask("turn on the light")
    assert hub.backend.calls == [] and refused(result) == ["which"]


async def test_a_device_the_request_never_names_never_runs(tmp_path) -> None:
    hub, puppet = demo(tmp_path)
    puppet.next = [("turn_on", {"entity_id": "switch.coffee_machine"})]
    result = await hub.ask("turn on the desk lamp")
    assert hub.backend.calls == [] and refused(result) == ["target"]
    puppet.next = [("turn_on", {"entity_id": "light.kitchen"}), ("turn_on", {"entity_id": "switch.coffee_machine"})]
    await hub.ask("turn on the kitchen light and the coffee machine", conversation_id="c2")
    assert sorted(c[0] for c in hub.backend.calls) == ["light.kitchen", "switch.coffee_machine"]


@pytest.mark.parametrize("command", ["turn off the desk lamp and the kitchen light on"])
async def test_a_switch_the_request_says_both_ways_of_is_asked_about(tmp_path, command) -> None:
    hub, puppet = demo(tmp_path)
    puppet.next = [("turn_on", {"entity_id": "light.desk_lamp"})]
    result = await hub.ask(command)
    assert hub.backend.calls == [] and refused(result) == ["unclear"]
    assert result.reply == phrase("en", "fit.unclear_action", name="Desk lamp")
