"""The fast path understands both releases of HA's templates: the installed one and 2025.6.23
(shipped with the hub), which says what later releases dropped."""

from __future__ import annotations

from pathlib import Path

import pytest

from hub.home.entities import Entity
from hub.understanding.recognition import OLDER_INTENTS, load_intents, narrow, recognize
from tests.home.test_fast_path_understanding import BigHome

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def home(tmp_path: Path) -> BigHome:
    home = BigHome(tmp_path)
    home.store.upsert(Entity("binary_sensor.smoke_battery", "Smoke detector battery", "on",
                             area="Hallway", device_class="battery", source="demo"))
    home.store.upsert(Entity("cover.kitchen_awning", "Patio awning", "closed", {"current_position": 0},
                             area="Kitchen", device_class="awning", source="demo"))
    return home


async def _intents_per_release(home: BigHome, text: str) -> list[list[str]]:
    """The intents each template set (installed, then 2025.6) recognizes in `text` alone."""
    await home.fast_path.prepare("en")
    loaded = load_intents("en")
    assert loaded is not None
    data = await home.fast_path._home_data("en")
    return [[r.intent.name for r in recognize(text, (intents,), loaded, data, "en")]
            for intents in narrow(loaded, data)]


@pytest.mark.parametrize("text, expected", [
    ("are any batteries low?", "Yes."),  # the binary-sensor class questions: 2025.6 only
    ("is the smoke detector battery low", "Yes."),
])
async def test_a_question_only_the_older_release_has_is_answered(home: BigHome, text: str,
                                                                 expected: str) -> None:
    assert await _intents_per_release(home, text) == [[], ["HassGetState"]]
    before = home.snapshot()
    outcome = await home.say(text)
    assert outcome is not None and outcome.intent == "HassGetState"
    assert outcome.reply.startswith(expected) and "Smoke detector battery" in outcome.reply
    assert not outcome.calls and home.snapshot() == before  # a question never acts


@pytest.mark.parametrize("text", ["turn on all the lights everywhere", "turn on every light"])
async def test_a_whole_home_command_only_the_older_release_has_is_carried_out(home: BigHome, text: str) -> None:
    assert await _intents_per_release(home, text) == [[], ["HassTurnOn"]]
    outcome = await home.say(text)
    lights = sorted(e.entity_id for e in home.store.all() if e.domain == "light")
    assert outcome is not None
    assert sorted(c.arguments["entity_id"] for c in outcome.calls) == lights
    assert all(home.store.get(i).state == "on" for i in lights)


@pytest.mark.parametrize("text, language, expected", [
    ("is anything vibrating?", "en", "Yes."), ("¿Hay algo vibrando?", "es", "Sí."),
])
async def test_a_kind_the_template_requires_as_context_is_what_it_asks_about(
        home: BigHome, text: str, language: str, expected: str) -> None:
    """2025.6 requires the vibration class as context where no name is said; HA's context holds
    only a named entity's class, so the hub reads the requirement as the kind asked about."""
    home.store.upsert(Entity("binary_sensor.washer_vibration", "Washing machine", "on", area="Hallway",
                             device_class="vibration", source="demo"))
    before = home.snapshot()
    outcome = await home.say(text, language)
    assert outcome is not None and outcome.intent == "HassGetState", text
    assert outcome.reply.startswith(expected) and "Washing machine" in outcome.reply
    assert not outcome.calls and home.snapshot() == before  # a question never acts


async def test_a_command_only_the_installed_release_has_still_is(home: BigHome) -> None:
    text = "open up the awnings on the kitchen"
    assert await _intents_per_release(home, text) == [["HassTurnOn"], []]
    outcome = await home.say(text)
    assert outcome is not None
    assert [(c.name, c.arguments) for c in outcome.calls] == [("turn_on", {"entity_id": "cover.kitchen_awning"})]
    assert home.store.get("cover.kitchen_awning").state == "open"


async def test_a_command_is_no_question_whose_wildcard_swallowed_it(home: BigHome) -> None:
    """2025.6's "sind alle {zone}" (a wildcard) matches "Alle Lichter blau färben" too: a match
    without a wildcard (HassLightSet's) keeps it out, as in HA's matcher."""
    home.store.upsert(Entity("person.felix", "Felix", "not_home", source="demo"))
    outcome = await home.say("Alle Lichter blau färben", "de")
    assert outcome is None or outcome.intent == "HassLightSet"


def test_the_older_release_is_shipped_for_the_main_languages() -> None:
    for code in ("en", "de", "fr", "es", "nl", "it", "pl", "pt"):
        loaded = load_intents(code)
        assert loaded is not None and len(loaded.intents) == 2, code
        assert (OLDER_INTENTS / f"{code}.json.gz").is_file()
    assert (OLDER_INTENTS / "README.md").read_text(encoding="utf-8").count("Creative Commons Attribution 4.0")
