"""End to end through a real Home Assistant 2025.4.4 over Wyoming, in en, de, fr (issue #27): HA's
`local_todo` list ("Chores") and `shopping_list`, its demo calendars and weather, the hub's
timers. Said to HA's conversation API and carried out by the hub through HA's services: add an
item, read the list (`todo.get_items` over `?return_response`), check an item off, read today's
calendar (`calendar.get_events`), the weather now and tomorrow's forecast
(`weather.get_forecasts`), start a timer and cancel all timers. Every reply is checked against
what HA itself holds. One HA start for all; the hub's model server is down: every turn here must
be the fast path's."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone
from typing import Any, Iterator

import pytest

from ha.ha_harness import HomeAssistantInstance, free_port
from ha.test_e2e_wyoming import HubProcess, add_hub_to_home_assistant, converse, hub_turn_lines, speech
from hub.locales import format_number, phrase

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

CHORES, SHOPPING = "todo.chores", "todo.shopping_list"
CALENDARS = ("calendar.calendar_1", "calendar.calendar_2")
WEATHER = "weather.demo_weather_south"
SAID = {  # add, read, check off, calendar today, weather now, weather tomorrow, a timer, cancel all
    "en": ("add buy stamps to my chores list", "what's on my chores list", "check off buy stamps on my chores list",
           "what's on my calendar today", "what's the weather like", "what's the weather tomorrow",
           "set a timer for 10 minutes", "cancel all timers"),
    "de": ("Füge Briefmarken kaufen zur Chores Liste hinzu", "Was steht auf der Chores Liste?",
           "Hake Briefmarken kaufen auf der Chores Liste ab", "Was steht heute im Kalender?",
           "Wie ist das Wetter?", "Wie wird das Wetter morgen?", "Stelle einen Timer auf 10 Minuten",
           "Alle Timer abbrechen"),
    "fr": ("Ajoute acheter des timbres à la liste Chores", "Qu'est-ce qu'il y a sur la liste Chores ?",
           "Coche acheter des timbres sur la liste Chores", "Qu'est-ce qu'il y a dans mon agenda aujourd'hui ?",
           "Quel temps fait-il", "Quel temps fera-t-il demain ?", "Mets un minuteur de 10 minutes",
           "Annule tous les minuteurs"),
}
ITEM = {"en": "buy stamps", "de": "Briefmarken kaufen", "fr": "acheter des timbres"}


async def add_lists_and_expose(ha: HomeAssistantInstance) -> None:
    """HA's own lists by their config flows; the calendars, the lists and one weather station
    exposed to Assist, nothing else of the demo."""
    for handler, data in (("local_todo", {"todo_list_name": "Chores"}), ("shopping_list", {})):
        flow = await ha.rest("POST", "/api/config/config_entries/flow", {"handler": handler})
        result = await ha.rest("POST", f"/api/config/config_entries/flow/{flow['flow_id']}", data)
        assert result.get("type") == "create_entry", result
    wanted = {CHORES, SHOPPING, WEATHER, *CALENDARS}
    for _ in range(100):
        states = {s["entity_id"] for s in await ha.states()}
        if wanted <= states:
            break
        await asyncio.sleep(0.2)
    assert wanted <= states, f"HA has no {sorted(wanted - states)}"
    await ha.ws("homeassistant/expose_entity", assistants=["conversation"], should_expose=False,
                entity_ids=sorted(states - wanted))
    await ha.ws("homeassistant/expose_entity", assistants=["conversation"], should_expose=True,
                entity_ids=sorted(wanted))


@pytest.fixture(scope="module")
def lists_ha(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HomeAssistantInstance]:
    instance = HomeAssistantInstance(tmp_path_factory.mktemp("ha-lists"), extra_config="\ndemo:\n")
    instance.start()
    try:
        asyncio.run(add_lists_and_expose(instance))
        yield instance
    finally:
        instance.stop()


@pytest.fixture(scope="module")
def hub(lists_ha: HomeAssistantInstance, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[HubProcess, str]]:
    process = HubProcess(tmp_path_factory.mktemp("hub-lists"), lists_ha, language="en", engine="openai",
                         remote_url=f"http://127.0.0.1:{free_port()}/v1", remote_model="none")
    process.start()
    try:
        yield process, asyncio.run(add_hub_to_home_assistant(lists_ha, process))
    finally:
        process.stop()


async def answered(ha: HomeAssistantInstance, domain: str, service: str, entity_id: str, **data: Any) -> dict[str, Any]:
    """HA's own response to a service that answers, for the entity."""
    result = await ha.rest("POST", f"/api/services/{domain}/{service}?return_response",
                           {"entity_id": entity_id, **data})
    return result["service_response"][entity_id]


async def tomorrows_forecast(ha: HomeAssistantInstance, language: str) -> tuple[str, str]:
    """Tomorrow's condition in HA's words and its highest temperature, from HA's forecast."""
    tomorrow = (datetime.now(timezone.utc) + timedelta(days=1)).date()
    forecast = (await answered(ha, "weather", "get_forecasts", WEATHER, type="daily"))["forecast"]
    day = next(f for f in forecast if datetime.fromisoformat(f["datetime"]).astimezone(timezone.utc).date() == tomorrow)
    return phrase(language, f"forecast.{day['condition']}"), format_number(max(day["temperature"], day["templow"]), language)


@pytest.mark.parametrize("language", list(SAID))
async def test_lists_calendar_weather_and_timers_through_home_assistant(lists_ha: HomeAssistantInstance, hub,
                                                                       language: str) -> None:
    ha, (process, agent_id) = lists_ha, hub
    add, read, check, calendar, weather, forecast, timer, cancel_all = SAID[language]
    turns_before = len(hub_turn_lines(process))
    replies = []

    async def say(text: str) -> str:
        result, seconds = await converse(ha, agent_id, text, language=language)
        assert result["response"]["response_type"] != "error", result
        replies.append(f"{text!r} → {speech(result)!r} ({seconds:.2f} s)")
        return speech(result)

    item = ITEM[language]
    assert item in await say(add)
    items = (await answered(ha, "todo", "get_items", CHORES, status="needs_action"))["items"]
    assert [i["summary"] for i in items] == [item]
    assert await say(read) == phrase(language, "list.items", name="Chores", items=item)
    assert item in await say(check)
    done = (await answered(ha, "todo", "get_items", CHORES, status="completed"))["items"]
    assert item in [i["summary"] for i in done]
    assert (await ha.state(CHORES))["state"] == "0"

    now = datetime.now(timezone.utc)
    today = [e["summary"] for c in CALENDARS for e in (await answered(
        ha, "calendar", "get_events", c, start_date_time=now.isoformat(),
        end_date_time=(now.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)).isoformat()))["events"]]
    said = await say(calendar)
    assert today and all(summary in said for summary in today), (today, said)

    station = await ha.state(WEATHER)
    assert format_number(float(station["attributes"]["temperature"]), language) in await say(weather)
    condition, high = await tomorrows_forecast(ha, language)
    said = await say(forecast)
    assert condition in said and high in said, (condition, high, said)

    await say(timer)
    assert await say(cancel_all) == phrase(language, "timer.cancelled_all", count=1)
    lines = hub_turn_lines(process)[turns_before:]
    assert len(lines) == len(SAID[language]) and all("via fast_path" in line for line in lines), lines
    print(f"\n[e2e lists] {language}: " + " | ".join(replies))


async def test_the_shopping_list_of_home_assistant(lists_ha: HomeAssistantInstance, hub) -> None:
    ha, (_, agent_id) = lists_ha, hub
    result, _ = await converse(ha, agent_id, "add oat milk to my shopping list")
    assert "oat milk" in speech(result)
    items = (await answered(ha, "todo", "get_items", SHOPPING))["items"]
    assert [i["summary"] for i in items] == ["oat milk"]
    result, _ = await converse(ha, agent_id, "what's on my shopping list?")
    assert "oat milk" in speech(result)
