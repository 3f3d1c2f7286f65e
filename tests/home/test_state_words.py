"""A binary sensor's state is spoken by its device class in the request's language ("low",
"dry", "detected"), from Home Assistant's own translations: answers to questions through the
real fast path (hassil, both template releases) over a demo-style home, and the word lookup."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hub.core.tools import ToolContext
from hub.home.entities import Entity
from hub.locales import SUPPORTED_LANGUAGES, phrase
from hub.locales.states import StateWord, state_word
from tests.home.test_fast_path_understanding import BigHome

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[2]
HA_PACKAGE = ROOT / ".cache/ha-venv/lib/python3.13/site-packages/homeassistant"


@pytest.fixture
def home(tmp_path: Path) -> BigHome:
    home = BigHome(tmp_path)
    add = home.store.upsert
    add(Entity("binary_sensor.phone_battery", "Phone", "on", area="Office", device_class="battery",
               source="demo"))
    add(Entity("binary_sensor.water", "Water sensor", "off", area="Kitchen", device_class="moisture",
               source="demo"))
    add(Entity("binary_sensor.garage_motion", "Garage motion", "on", area="Garage", device_class="motion",
               source="demo"))
    add(Entity("binary_sensor.garage_door", "Garage door", "on", area="Garage", device_class="garage_door",
               source="demo"))
    add(Entity("binary_sensor.co", "CO sensor", "off", area="Kitchen", device_class="carbon_monoxide",
               source="demo"))
    add(Entity("binary_sensor.back_door", "Back door", "on", area="Kitchen", device_class="door",
               source="demo"))
    add(Entity("binary_sensor.cellar_door", "Cellar door", "off", area="Hallway", device_class="door",
               source="demo"))
    return home


@pytest.mark.parametrize("text, language, expected", [
    ("is the phone battery low?", "en", "Yes. Phone: battery low."),  # the class, not just "low"
    ("is the phone battery normal?", "en", "No. Phone: battery low."),
    ("which batteries are low?", "en", "Battery low: Phone."),
    ("how many batteries are low?", "en", "Battery low: 1 of 1."),
    ("is the water sensor wet?", "en", "No. Water sensor: dry."),  # HA's label
    ("is there motion in the garage?", "en", "Yes. Garage motion: detected."),
    ("is the garage door open?", "en", "Yes. Garage door is open."),
    ("is there any carbon monoxide in the kitchen?", "en", "No. CO sensor: clear."),
    ("is there any carbon monoxide?", "en", "No. CO sensor: clear."),  # the hub's own template
    # door sensors asked as covers are ("open"): on is open
    ("are any doors open?", "en", "Yes. Back door is open."),
    ("which doors are open?", "en", "Open: Back door."),
    ("is the cellar door open?", "en", "No. Cellar door is closed."),
    ("ist der Phone Akku schwach?", "de", "Ja. Phone: Akku niedrig."),
    # 2025.6 names German responses in German ("welches", "wie_viele")
    ("Welche Akkus sind schwach?", "de", "Akku niedrig: Phone."),
    ("Wie viele Akkus sind schwach?", "de", "Akku niedrig: 1 von 1."),
    ("sind Akkus schwach?", "de", "Ja. Phone: Akku niedrig."),
    ("ist der Water sensor nass?", "de", "Water sensor: trocken."),
    ("wurde Kohlenmonoxid in der Küche entdeckt?", "de", "Nein. CO sensor: frei."),
    ("Ist das Garage door offen?", "de", "Ja. Garage door ist offen."),  # the hub's predicate
    ("La batterie du Phone est-elle faible ?", "fr", "Phone : batterie faible."),
    ("Est-ce que le Water sensor est mouillé ?", "fr", "Water sensor : sec."),
    ("is de batterij van de Phone bijna leeg", "nl", "Ja. Phone: batterij bijna leeg."),
    ("is de Water sensor nat?", "nl", "Nee. Water sensor: droog."),
    ("¿se detecta monóxido de carbono en la cocina?", "es", "No. CO sensor: no detectado."),
    ("¿hay alguna batería baja?", "es", "Sí. Phone: batería baja."),
    ("la batteria del Phone è scarica?", "it", "Phone: batteria scarica."),
    ("czy bateria Phone jest słaba?", "pl", "Phone: niski poziom baterii."),
])
async def test_a_binary_sensor_question_is_answered_in_the_words_of_its_class(
        home: BigHome, text: str, language: str, expected: str) -> None:
    before = home.snapshot()
    outcome = await home.say(text, language)
    assert outcome is not None and outcome.intent == "HassGetState", text
    assert outcome.reply == expected
    assert not outcome.calls and home.snapshot() == before and not home.backend.calls  # never acts


async def test_get_state_says_the_class_word_in_a_sentence(home: BigHome) -> None:
    result = await home.registry.get("get_state").execute(
        {"entity_id": "binary_sensor.phone_battery"}, ToolContext("c1", language="de"))
    assert result.speech == "Phone: Akku niedrig."
    assert result.data["state"] == "on"  # the model still gets HA's raw state


@pytest.mark.parametrize("device_class", [None, "", "sparkle", "<script>", "battery.on", "../../x"])
def test_an_unknown_or_hostile_device_class_says_on_or_off(device_class: str | None) -> None:
    for language in ("en", "de", "ja"):
        assert state_word(language, "binary_sensor", "on", device_class) == StateWord(phrase(language, "state.on"), True)
        assert state_word(language, "binary_sensor", "off", device_class) == StateWord(phrase(language, "state.off"), True)


def test_a_language_home_assistant_lacks_says_the_hubs_own_word_not_english() -> None:
    assert not (ROOT / "hub/locales/states/ar.yaml").exists()
    assert state_word("ar", "binary_sensor", "on", "garage_door") == StateWord(phrase("ar", "state.open"), True)
    assert state_word("ar", "binary_sensor", "on", "lock") == StateWord(phrase("ar", "state.unlocked"), True)
    assert state_word("ar", "binary_sensor", "on", "battery") == StateWord(phrase("ar", "state.battery_low"), False)
    assert state_word("ar", "binary_sensor", "on", "smoke") == StateWord(phrase("ar", "state.on"), True)
    assert state_word("ar", "vacuum", "docked") == StateWord(phrase("ar", "status.docked"), False)
    assert state_word("hr", "cover", "opening") == StateWord(phrase("hr", "status.opening"), False)  # HA's hr lacks it
    assert state_word("bg", "lawn_mower", "returning") == StateWord("връщане", False)  # HA's bg says "returning"


@pytest.mark.parametrize("language, domain, state, device_class, expected", [
    ("de", "binary_sensor", "on", "problem", ("Problem", False)),  # a German noun keeps its capital
    ("de", "binary_sensor", "off", "moisture", ("trocken", False)),
    ("en", "binary_sensor", "off", "problem", ("OK", False)),  # an abbreviation stays as it is
    ("fr", "binary_sensor", "on", "smoke", ("détectée", False)),
    ("zh", "binary_sensor", "on", "battery", ("电量低", False)),  # the hub's, not HA's bare "低"
    ("de", "binary_sensor", "on", "door", ("offen", True)),  # the hub's predicate, not HA's "geöffnet"
    ("de", "vacuum", "docked", None, ("angedockt", False)),
    ("pt", "vacuum", "cleaning", None, ("a limpar", False)),  # every word of HA's "A Limpar" lowered
    ("fr", "lock", "jammed", None, ("bloqué", False)),
    ("de", "lock", "locked", None, ("abgeschlossen", True)),  # the hub's own phrase for a common state
    ("de", "binary_sensor", "on", "battery_charging", ("wird geladen", False)),  # a verb phrase, as a label
    ("de", "cover", "opening", None, ("wird geöffnet", False)),
    ("en", "climate", "heat_cool", None, ("heating and cooling", False)),  # not in HA's files: the hub's
    ("en", "sensor", "21.5", None, None),  # no word: the caller speaks the number
    ("en", "sensor", "washing", None, None),  # a custom state
])
def test_state_words(language: str, domain: str, state: str, device_class: str | None,
                     expected: tuple[str, bool] | None) -> None:
    assert state_word(language, domain, state, device_class) == (expected and StateWord(*expected))


def test_every_state_file_is_a_hub_language_with_words_for_the_classes() -> None:
    files = sorted(p.stem for p in (ROOT / "hub/locales/states").glob("*.yaml"))
    assert set(files) <= set(SUPPORTED_LANGUAGES) and len(files) >= 30
    for language in ("en", "de", "fr", "nl", "it", "pl", "pt", "ru", "ja"):
        for device_class in ("moisture", "motion", "door", "garage_door", "carbon_monoxide"):
            assert state_word(language, "binary_sensor", "on", device_class) != phrase(language, "state.on")


@pytest.mark.skipif(not HA_PACKAGE.is_dir(), reason="needs the Home Assistant venv (.cache/ha-venv)")
def test_the_shipped_words_are_what_the_script_extracts(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(ROOT / "scripts/extract_states.py"), str(HA_PACKAGE),
                    "--out", str(tmp_path)], check=True, capture_output=True,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})
    shipped = ROOT / "hub/locales/states"
    assert sorted(p.name for p in tmp_path.glob("*.yaml")) == sorted(p.name for p in shipped.glob("*.yaml"))
    for extracted in tmp_path.glob("*.yaml"):
        assert extracted.read_text(encoding="utf-8") == (shipped / extracted.name).read_text(encoding="utf-8")
