"""Questions about the home that no template reads, answered from its data on the direct path
(issue #39 point 1), in the 8 main languages: a device's other readings, media players, the
weather, calendar events by the question's words or away from home, to-do items by the
question's words, "is anything on upstairs?". Real fast path (hassil, HA's templates and the
hub's), real reading tools; the calendar and the weather answer as HA's services do
(tests/helpers/answering_home.py). Every reply is checked against the home's own data, and no
question acts. End to end through a real Home Assistant: tests/ha/test_e2e_home_questions.py."""

from __future__ import annotations

import pytest
import pytest_asyncio

from hub.home.entities import Entity
from hub.home.state_speech import spoken_state
from hub.locales import format_number, phrase
from hub.understanding.assist_responses import assist_answer
from hub.understanding.plans import Question
from tests.helpers.answering_home import EVENTS, FORECAST, AnsweringHome

# one home for the module: questions never change it (each test checks that)
pytestmark = [pytest.mark.timeout(120), pytest.mark.asyncio(loop_scope="module")]

ITEMS = {"todo.personal_tasks": ["Call Liza", "Pay rent"], "todo.shopping_list": ["Milk"]}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def home(tmp_path_factory: pytest.TempPathFactory):
    home = AnsweringHome(tmp_path_factory.mktemp("answering-home"))
    await home.start(ITEMS)
    yield home
    await home.stop()


def snapshot(home: AnsweringHome) -> list[tuple]:
    return [(e.entity_id, e.state, e.attributes) for e in home.store.all()]


async def asked(home: AnsweringHome, text: str, language: str):
    """The answer, after checking that the question changed nothing."""
    before = snapshot(home)
    outcome = await home.ask(text, language)
    assert outcome is not None, text
    assert snapshot(home) == before and not home.backend.calls, f"{text!r} acted"
    assert all(c.name in ("list_items", "calendar_events", "weather_forecast") for c in outcome.calls)
    return outcome


@pytest.mark.parametrize("text, language", [
    ("what's the battery level of the motion sensor?", "en"), ("battery level of the motion sensor", "en"),
    ("Wie hoch ist der Batteriestand vom Motion Sensor?", "de"),
    ("Quel est le niveau de batterie du Motion Sensor ?", "fr"), ("¿Cuál es la batería del Motion Sensor?", "es"),
    ("Wat is het batterijniveau van de Motion Sensor?", "nl"),
    ("Qual è il livello della batteria del Motion Sensor?", "it"),
    ("Jaki jest poziom baterii Motion Sensor?", "pl"), ("Qual é o nível da bateria do Motion Sensor?", "pt"),
    # the English name said in the question's language
    ("what's the battery of the motion detector?", "en"), ("Wie viel Akku hat der Bewegungsmelder?", "de"),
    ("Quel est le niveau de batterie du détecteur de mouvement ?", "fr"), ("¿Cuál es la batería del sensor de movimiento?", "es"),
    ("Qual é a bateria do sensor de movimento?", "pt"),
])
async def test_a_devices_battery_is_its_percentage_sensor(home: AnsweringHome, text: str, language: str) -> None:
    """The motion sensor device has a 55 % battery sensor and a binary low/normal one: the
    percentage is said, not the motion state."""
    outcome = await asked(home, text, language)
    assert outcome.reply == spoken_state(home.store.get("sensor.motion_sensor_battery"), language)
    assert "55" in outcome.reply


@pytest.mark.parametrize("text, entity_id", [
    ("how much power is the washer plug using?", "sensor.washer_plug_power"),
    ("what's the signal of the motion sensor?", "sensor.motion_sensor_signal"),
    ("what's the battery of the washer plug?", "binary_sensor.washer_plug_battery"),  # no percentage: low/normal
])
async def test_a_devices_other_readings(home: AnsweringHome, text: str, entity_id: str) -> None:
    outcome = await asked(home, text, "en")
    assert outcome.reply == spoken_state(home.store.get(entity_id), "en")


async def test_a_reading_the_device_lacks_is_said_so(home: AnsweringHome) -> None:
    outcome = await asked(home, "what's the battery of the kitchen light?", "en")
    assert outcome.reply == phrase("en", "reading.none", part=phrase("en", "part.battery"), name="Kitchen light")


@pytest.mark.parametrize("text, language", [
    ("what's playing?", "en"), ("Läuft gerade Musik?", "de"), ("Qu'est-ce qui joue en ce moment ?", "fr"),
    ("Wat speelt er?", "nl"), ("Co teraz gra?", "pl"),
])
async def test_what_is_playing(home: AnsweringHome, text: str, language: str) -> None:
    """Nothing plays; the paused speaker is said with what it plays."""
    outcome = await asked(home, text, language)
    speaker = home.store.get("media_player.living_room_speaker")
    assert outcome.reply == f"{phrase(language, 'media.nothing_playing')} {spoken_state(speaker, language)}"
    assert speaker.attributes["media_title"] in outcome.reply and "Kitchen radio" not in outcome.reply


async def test_a_named_player_is_said_as_it_is(home: AnsweringHome) -> None:
    outcome = await asked(home, "is the living room speaker playing, paused or stopped?", "en")
    assert outcome.reply == "Living room speaker: paused, Blue in Green by Miles Davis."


def day(offset: int) -> dict:
    return FORECAST[offset]


@pytest.mark.parametrize("text, language, offsets", [
    ("is today sunny or cloudy?", "en", [0]), ("will it rain tomorrow?", "en", [1]),
    ("what's the weather this week?", "en", [0, 1, 2, 3, 4]),
    ("Wird es heute regnen?", "de", [0]), ("Wie ist das Wetter morgen?", "de", [1]),
    ("Va-t-il pleuvoir demain ?", "fr", [1]), ("Quel temps fera-t-il cette semaine ?", "fr", [0, 1, 2, 3, 4]),
    ("¿Lloverá mañana?", "es", [1]), ("Gaat het morgen regenen?", "nl", [1]), ("Pioverà domani?", "it", [1]),
    ("Czy jutro będzie padać?", "pl", [1]), ("Vai chover amanhã?", "pt", [1]),
    # what to wear is the weather's, not a calendar event's words
    ("should I wear a coat tonight?", "en", [0]), ("Brauche ich morgen eine Jacke?", "de", [1]),
    ("Dois-je prendre un manteau demain ?", "fr", [1]), ("Czy jutro potrzebuję kurtki?", "pl", [1]),
])
async def test_the_forecast_from_the_weather_service(home: AnsweringHome, text: str, language: str,
                                                    offsets: list[int]) -> None:
    outcome = await asked(home, text, language)
    assert [c.arguments["entity_id"] for c in outcome.calls] == ["weather.home"]
    for offset in offsets:
        forecast = day(offset)
        assert phrase(language, f"forecast.{forecast['condition']}") in outcome.reply, (forecast, outcome.reply)
        assert format_number(forecast["temperature"], language) in outcome.reply
        assert format_number(forecast["templow"], language) in outcome.reply
    if offsets == [1]:  # 80 % chance of rain
        assert format_number(80, language) in outcome.reply


@pytest.mark.parametrize("text, language", [
    ("what's the outside temperature?", "en"), ("how warm is it outside?", "en"),
    ("Quelle est la température dehors ?", "fr"), ("Che temperatura c'è fuori?", "it"),
    ("Wie ist die Außentemperatur?", "de"), ("¿Qué temperatura hace fuera?", "es"),
    ("Jaka jest temperatura na zewnątrz?", "pl"), ("Qual é a temperatura lá fora?", "pt"),
])
async def test_outside_the_weather_service_comes_first_and_the_sensor_is_named(
        home: AnsweringHome, text: str, language: str) -> None:
    outcome = await asked(home, text, language)
    station = phrase(language, "weather.outside", name="Home", temperature="14 °C")
    assert outcome.reply == f"{station} {spoken_state(home.store.get('sensor.outside_temperature'), language)}"


@pytest.mark.parametrize("text, language, said", [("Wie warm ist es draußen?", "de", "14 Grad"),
                                                  ("Hoe warm is het buiten?", "nl", "14 graden")])
async def test_how_warm_outside_is_the_weather_service_as_has_templates_answer(
        home: AnsweringHome, text: str, language: str, said: str) -> None:
    """HA's own weather templates read these (HassGetWeather): the weather entity answers, as HA's does."""
    outcome = await asked(home, text, language)
    assert outcome.reply == said


@pytest.mark.parametrize("text, language, items", [
    ("who do I need to call?", "en", ["Call Liza"]),
    ("what's on my to-do list?", "en", ["Call Liza", "Pay rent"]),
    ("what's on my tasks?", "en", ["Call Liza", "Pay rent"]),
    ("what's on the grocery list?", "en", ["Milk"]),
    ("Was steht auf meiner Aufgabenliste?", "de", ["Call Liza", "Pay rent"]),
    ("Qu'est-ce qu'il y a sur ma liste de tâches ?", "fr", ["Call Liza", "Pay rent"]),
    ("¿Qué hay en mi lista de tareas?", "es", ["Call Liza", "Pay rent"]),
    ("Wat staat er op mijn takenlijst?", "nl", ["Call Liza", "Pay rent"]),
    ("Cosa c'è nella mia lista delle cose da fare?", "it", ["Call Liza", "Pay rent"]),
    ("Co jest na mojej liście zadań?", "pl", ["Call Liza", "Pay rent"]),
    ("O que há na minha lista de tarefas?", "pt", ["Call Liza", "Pay rent"]),
])
async def test_list_items_by_what_people_call_lists_and_by_the_questions_words(
        home: AnsweringHome, text: str, language: str, items: list[str]) -> None:
    outcome = await asked(home, text, language)
    for item in items:
        assert item in outcome.reply
    others = {i for found in ITEMS.values() for i in found} - set(items)
    assert not any(other in outcome.reply for other in others), outcome.reply


@pytest.mark.parametrize("text, language, said", [
    ("Wen muss ich anrufen?", "de", "anrufen"), ("Chi devo chiamare?", "it", "chiamare"),
    ("Do kogo muszę zadzwonić?", "pl", "zadzwonić"),
])
async def test_nothing_on_the_lists_about_the_words_is_said_so(home: AnsweringHome, text: str, language: str,
                                                               said: str) -> None:
    """The items are English: a German "anrufen" finds none, and says which word it looked for."""
    outcome = await asked(home, text, language)
    assert outcome.reply == phrase(language, "list.nothing_about", words=said)


def summaries(*names: str) -> list[str]:
    known = {e["summary"] for e in EVENTS}
    assert set(names) <= known
    return list(names)


@pytest.mark.parametrize("text, language, wanted", [
    ("who am I meeting for dinner?", "en", summaries("Dinner with Liza")),
    ("am I leaving the house today?", "en", summaries("Dentist")),
    ("what classes do I have this week?", "en", summaries("Yoga class")),
    ("is anyone visiting this week?", "en", summaries("Grandma visits")),
    ("what's my next appointment?", "en", summaries("Dentist")),
    ("Habe ich heute Termine außer Haus?", "de", summaries("Dentist")),
    ("Est-ce que je sors de la maison aujourd'hui ?", "fr", summaries("Dentist")),
    ("Heb ik vandaag afspraken buiten de deur?", "nl", summaries("Dentist")),
    ("Ho appuntamenti fuori casa oggi?", "it", summaries("Dentist")),
    ("Czy dziś wychodzę z domu?", "pl", summaries("Dentist")),
    ("Vou sair de casa hoje?", "pt", summaries("Dentist")),
    ("Qu'est-ce que j'ai cette semaine ?", "fr", summaries("Dentist", "Dinner with Liza", "Yoga class", "Grandma visits")),
])
async def test_calendar_events_by_the_questions_words_or_away_from_home(
        home: AnsweringHome, text: str, language: str, wanted: list[str]) -> None:
    """"Morning run" is over by now (7:00, asked at 14:05); the dentist is the one event somewhere."""
    outcome = await asked(home, text, language)
    for summary in wanted:
        assert summary in outcome.reply, outcome.reply
    assert not any(e["summary"] in outcome.reply for e in EVENTS if e["summary"] not in wanted), outcome.reply
    if "Dentist" in wanted and len(wanted) == 1 and "next" not in text:
        assert "Main Street 5" in outcome.reply


@pytest.mark.parametrize("text, language, on", [
    ("is anything on upstairs?", "en", ["Desk lamp"]),
    ("is anything on in the kitchen?", "en", ["Kitchen radio", "Washer Plug"]),
    ("Ist in der Küche etwas an?", "de", ["Kitchen radio", "Washer Plug"]),
    ("Est-ce que quelque chose est allumé dans la cuisine ?", "fr", ["Kitchen radio", "Washer Plug"]),
    ("¿Hay algo encendido en la cocina?", "es", ["Kitchen radio", "Washer Plug"]),
])
async def test_is_anything_on_in_a_place(home: AnsweringHome, text: str, language: str, on: list[str]) -> None:
    """What switches on and is on there, never a sensor that is "on" (the motion sensor)."""
    outcome = await asked(home, text, language)
    assert outcome.reply.startswith(phrase(language, "answer.yes"))
    for name in on:
        assert name in outcome.reply
    assert "Motion" not in outcome.reply and "Coffee" not in outcome.reply


async def test_nothing_on_the_calendar_about_the_words_is_said_so(home: AnsweringHome) -> None:
    outcome = await asked(home, "do I have any tennis this week?", "en")
    assert outcome.reply == phrase("en", "calendar.nothing_about", words="tennis", when=phrase("en", "calendar.week"))


async def test_how_are_you_today_is_no_calendar_question(home: AnsweringHome) -> None:
    assert await home.ask("how are you today?") is None


@pytest.mark.parametrize("text, language", [
    ("do you like music?", "en"), ("Magst du Musik?", "de"), ("Est-ce que tu aimes la musique ?", "fr"),
    ("¿Te gusta la música?", "es"), ("Hou je van muziek?", "nl"), ("Ti piace la musica?", "it"),
    ("Czy lubisz muzykę?", "pl"), ("Gostas de música?", "pt"), ("what's your favourite song?", "en"),
])
async def test_a_question_of_taste_is_no_players_state(home: AnsweringHome, text: str, language: str) -> None:
    """Chit-chat about music, not what the paused speaker plays (it was answered so)."""
    assert await home.ask(text, language) is None
    assert "Miles Davis" in (await asked(home, "what's playing on the speaker?", "en")).reply  # still a player's


@pytest.mark.parametrize("language", ["en", "de", "fr"])
async def test_a_weather_entity_without_a_unit_is_never_said_with_none(language: str) -> None:
    """HA's weather templates read `temperature_unit`; an entity without one says the number alone."""
    station = Entity("weather.bare", "Bare", "cloudy", {"temperature": 7})
    said = assist_answer(Question("HassGetWeather", "default", [station]), language)
    assert "None" not in said and format_number(7, language) in said, said
