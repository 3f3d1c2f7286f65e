"""A state the hub answers itself reads as a sentence of the request's language: Home Assistant's
state words (UI labels, often verbs: sv "städar") as "X: label", the hub's own predicates as
"X is on", and a state HA leaves untranslated in the hub's own label, never an English word
inside another language. Through the real fast path (hassil) and the get_state tool over a home
with a device in every state the hub speaks."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
import yaml

from hub.core.tools import ToolContext
from hub.home.entities import Entity, EntityStore
from hub.home.watches import NotifyWhen, StateWatches
from hub.locales import SUPPORTED_LANGUAGES, phrase_keys
from hub.locales.states import state_word
from tests.home.test_fast_path_understanding import BigHome

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[2]
_ENGLISH = yaml.safe_load((ROOT / "hub/locales/states/en.yaml").read_text(encoding="utf-8"))
# every domain state the hub speaks: HA's (en.yaml, binary sensors aside) and the hub's own
# labels for domains HA's files leave out (a thermostat's mode, a timer); on/off are the hub's
# predicates (and Finnish "on" is "is")
SPOKEN = sorted({tuple(key.split(".")) for key in _ENGLISH if not key.startswith("binary_sensor.")}
                | {("climate", s) for s in ("heat", "cool", "heat_cool", "auto", "dry", "fan_only")}
                | {("timer", s) for s in ("active", "idle", "paused")})
SPOKEN = [(domain, state) for domain, state in SPOKEN if state not in ("on", "off")]


@pytest.fixture
def home(tmp_path: Path) -> BigHome:
    home = BigHome(tmp_path)
    home.store.upsert(Entity("vacuum.robot", "Robot", "cleaning", area="Hallway", source="demo"))
    home.store.upsert(Entity("cover.garage", "Garagentor", "opening", area="Garage", device_class="garage",
                             source="demo"))
    for n, (domain, state) in enumerate(SPOKEN):
        home.store.upsert(Entity(f"{domain}.x{n}", f"X{n}", state, source="demo"))
    return home


@pytest.mark.parametrize("text, language, expected", [
    # not "Garagentor ist opening": HA's German verb phrase, said as a label
    ("Ist das Garagentor offen?", "de", "Nein. Garagentor: wird geöffnet."),
    ("Schließt das Garagentor?", "de", "Nein. Garagentor: wird geöffnet."),
    ("Wie ist der Zustand vom Garagentor?", "de", "Garagentor: wird geöffnet."),
    # HA's labels are verbs: "Robot är städar" read wrong
    ("Vad är status för Robot?", "sv", "Robot: städar."),
    ("Hvad er status for Robot?", "da", "Robot: gør rent."),
    ("Mikä on Robot tila?", "fi", "Robot: siivoaa."),
    ("Trạng thái của Robot là gì?", "vi", "Robot: đang làm sạch."),  # not "Robot đang đang làm sạch"
    ("what is the robot doing?", "en", "Robot: cleaning."),
    ("is the Garagentor opening?", "en", "Yes. Garagentor: opening."),
    ("which garage doors are closing?", "en", "Closing: none."),  # not "Nothing is closing."
    ("is the front door locked", "en", "Yes. Front door is locked."),  # the hub's predicate
    ("Ist die Front door abgeschlossen?", "de", "Ja. Front door ist abgeschlossen."),
])
async def test_a_state_answer_reads_as_a_sentence_of_the_language(
        home: BigHome, text: str, language: str, expected: str) -> None:
    before = home.snapshot()
    outcome = await home.say(text, language)
    assert outcome is not None and outcome.intent == "HassGetState", text
    assert outcome.reply == expected
    assert not outcome.calls and home.snapshot() == before  # never acts


@pytest.mark.parametrize("language, expected", [
    ("ja", "Robot：クリーニング。"), ("zh", "Robot：正在清扫。"), ("fr", "Robot : nettoyage."),
    ("ar", "Robot: جارٍ التنظيف."),  # HA has no Arabic: the hub's own label
])
async def test_a_label_is_said_in_the_languages_shape(home: BigHome, language: str, expected: str) -> None:
    result = await home.registry.get("get_state").execute({"entity_id": "vacuum.robot"},
                                                          ToolContext("c1", language=language))
    assert result.speech == expected


# English-looking words that are the language's own for that state
THEIRS = {("ca", "error"), ("es", "error"), ("da", "standby"), ("de", "standby"), ("pt", "standby"),
          ("da", "auto"), ("nb", "auto"), ("sv", "auto"), ("nl", "open")}


@pytest.mark.parametrize("language", [lang for lang in SUPPORTED_LANGUAGES if lang != "en"])
async def test_no_state_is_said_in_english_inside_another_language(home: BigHome, language: str) -> None:
    """Each state's English word (HA's, or the hub's label) and its raw code are absent from the
    answer, but where the language says it so too (`THEIRS`: Spanish "error")."""
    ctx = ToolContext("c1", language=language)
    for n, (domain, state) in enumerate(SPOKEN):
        result = await home.registry.get("get_state").execute({"entity_id": f"{domain}.x{n}"}, ctx)
        own, english = state_word(language, domain, state), state_word("en", domain, state)
        assert own is not None and english is not None, (domain, state)
        assert own.text in result.speech, (domain, state, result.speech)
        for word in {english.text, state.replace("_", " ")} - {w for lang, w in THEIRS if lang == language}:
            assert not re.search(rf"\b{re.escape(word)}\b", result.speech, re.IGNORECASE), \
                f"{language} {domain}.{state}: {result.speech!r} says English {word!r}"


def test_every_spoken_state_has_a_hub_label_or_predicate() -> None:
    """Where no HA file has a state (ar, hi, ms, th; hr's covers), the hub's own word is there."""
    for domain, state in SPOKEN:
        assert f"status.{state}" in phrase_keys() or f"state.{state}" in phrase_keys(), (domain, state)


async def test_a_watch_reports_a_label_as_a_label() -> None:
    """"Tell me when the robot is docked": Swedish "Robot: dockad." when it arrives, and what it is
    doing now as a label too (not "Robot är nu dockad" / "Robot är städar")."""
    store = EntityStore()
    store.upsert(Entity("vacuum.robot", "Robot", "cleaning", source="demo"))
    reports: list[str] = []

    async def report(ctx: ToolContext, text: str, kind: str, data: dict) -> None:
        reports.append(text)

    watches = StateWatches(store)
    try:
        result = await NotifyWhen(store, watches, report).execute(
            {"entity_id": "vacuum.robot", "state": "docked"}, ToolContext("c1", language="sv"))
        assert result.pending
        store.update_state("vacuum.robot", "docked")
        for _ in range(100):
            if reports:
                break
            await asyncio.sleep(0.02)
        assert reports == ["Robot: dockad."]
        already = await NotifyWhen(store, watches, report).execute(
            {"entity_id": "vacuum.robot", "state": "docked"}, ToolContext("c1", language="sv"))
        assert already.speech == "Robot: dockad."
    finally:
        await watches.close()
