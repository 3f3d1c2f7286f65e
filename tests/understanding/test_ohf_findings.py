"""What OHF-Voice/intents' suite showed the hub doing unlike Home Assistant, held here with the
real hassil matcher, HA's sentence data and the real agent: said in a room, a kind of device with
no place is that room's (the installed release's reading over 2025.6's whole-home one); "louder"
to a player that reports no volume is its own step up (HA's HassSetVolumeRelative); the demo
player steps and mutes as HA's does; a named device said in a room it is not in gets HA's "no device
called …" reply; questions about the assistant are answered for the hub; where both releases of
HA's templates read a sentence, the newest's reading counts; a temperature written as text is read."""

from __future__ import annotations

import pytest

from hub.home.entities import Entity

from async_policy.async_helpers import TestHub
from helpers.scripted_engine import ScriptedEngine

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize("text, language", [
    ("otwórz rolety", "pl"),  # 2025.6's "[<area>] (<open>) [<all>] rolety" means every blind
    ("odsłoń wszystkie rolety", "pl"),
    ("open the blinds", "en"),
])
async def test_a_kind_said_in_a_room_is_that_rooms(tmp_path, text, language) -> None:
    hub = TestHub(tmp_path, ScriptedEngine([]), fast_path=True)
    hub.store.upsert(Entity("cover.office_blinds", "Office blinds", "closed", {"current_position": 0},
                            area="Office", device_class="blind", source="demo"))
    result = await hub.ask(text, language=language, area="Office")
    assert result.path == "fast_path", result.reply
    assert [c.call.arguments["entity_id"] for c in result.tool_calls] == ["cover.office_blinds"], result.reply
    assert hub.state("cover.office_blinds") == "open" and hub.state("cover.bedroom_blinds") == "closed"


async def test_louder_to_a_player_with_no_level_is_its_own_step(tmp_path) -> None:
    hub = TestHub(tmp_path, ScriptedEngine([]), fast_path=True)
    player = hub.store.get("media_player.living_room_speaker")
    hub.store.update_state(player.entity_id, "playing",
                           {k: v for k, v in player.attributes.items() if k != "volume_level"})
    for text, language in (("louder", "en"), ("Monte le volume", "fr")):
        result = await hub.ask(text, language=language)
        assert [(c.call.name, c.call.arguments) for c in result.tool_calls] == \
            [("change_volume", {"entity_id": player.entity_id, "step": "up"})], result.reply
        assert result.tool_calls[0].ok and result.path == "fast_path"
    assert hub.backend.calls[-2:] == [(player.entity_id, "volume_up", {})] * 2
    hub.store.update_state(player.entity_id, "playing", {**player.attributes, "volume_level": 0.5})
    known = await hub.ask("quieter", "c2")  # a level it reports: a step from it, as before
    assert [(c.call.name, c.call.arguments) for c in known.tool_calls] == \
        [("set_volume", {"entity_id": player.entity_id, "volume": 40})], known.reply


async def test_the_demo_player_steps_and_mutes(tmp_path) -> None:
    hub = TestHub(tmp_path, ScriptedEngine([]), fast_path=True)
    player = "media_player.living_room_speaker"
    hub.store.update_state(player, "playing", {**hub.store.get(player).attributes, "volume_level": 0.5})
    await hub.backend.call_service(hub.store.get(player), "volume_up", {})
    assert hub.store.get(player).attributes["volume_level"] == pytest.approx(0.6)
    await hub.backend.call_service(hub.store.get(player), "volume_mute", {"is_volume_muted": True})
    assert hub.store.get(player).attributes["is_volume_muted"] is True
    muted = await hub.ask("unmute")
    assert muted.tool_calls and muted.tool_calls[0].ok, muted.reply
    assert hub.store.get(player).attributes["is_volume_muted"] is False


async def test_a_word_of_two_meanings_means_what_the_device_named_can_do(tmp_path) -> None:
    """cs "ztlum" is "dim" and "mute": "ztlum TV" was a relative brightness ("TV can't do that");
    a TV says which, and HA's mute template reads it. A lamp is still dimmed."""
    hub = TestHub(tmp_path, ScriptedEngine([]), fast_path=True)
    hub.store.upsert(Entity("media_player.tv", "TV", "playing", {"volume_level": 0.5, "is_volume_muted": False},
                            area="Living room", source="demo"))
    muted = await hub.ask("ztlum TV", language="cs")
    assert [(c.call.name, c.call.arguments) for c in muted.tool_calls] == \
        [("mute", {"entity_id": "media_player.tv", "muted": True})], muted.reply
    dimmed = await hub.ask("ztlum Living room light", "c2", language="cs")
    assert [c.call.name for c in dimmed.tool_calls] == ["set_light"] and dimmed.path == "fast_path", dimmed.reply


async def test_a_relative_change_on_several_devices_says_what_it_did(tmp_path) -> None:
    """Each thermostat is stepped from its own setting (`Action.each`): there is no one value to
    say, and the reply once failed looking for it (KeyError, bench_understanding at 1,000 devices)."""
    hub = TestHub(tmp_path, ScriptedEngine([]), fast_path=True)
    hub.store.upsert(Entity("climate.living_room_2", "Living room radiator", "heat",
                            {"temperature": 18, "min_temp": 7, "max_temp": 30, "target_temp_step": 0.5},
                            area="Living room", source="demo"))
    result = await hub.ask("make it warmer in the living room")
    assert result.path == "fast_path" and sorted(c.call.arguments["entity_id"] for c in result.tool_calls) == \
        ["climate.living_room", "climate.living_room_2"], result.reply
    assert all(c.ok for c in result.tool_calls) and "Living room" in result.reply, result.reply


@pytest.mark.parametrize("text, language, reply", [
    ("turn on the kitchen light in the bedroom", "en",
     "Sorry, I am not aware of any device called Kitchen light in the Bedroom area"),
    ("Schalte die Küchenlampe im Schlafzimmer ein", "de", "Küchenlampe ist im Bereich Bedroom nicht vorhanden"),
])
async def test_a_named_device_said_in_a_room_it_is_not_in_is_not_found_there(tmp_path, text, language,
                                                                              reply) -> None:
    """HA's handler finds no device of that name in that area and says so (its own error reply,
    in the request's language); the hub once handed it to the model."""
    hub = TestHub(tmp_path, ScriptedEngine([]), fast_path=True)
    hub.store.upsert(Entity("light.kuechenlampe", "Küchenlampe", "off", area="Kitchen", source="demo"))
    result = await hub.ask(text, language=language)
    assert result.path == "fast_path" and not result.tool_calls, result.reply
    assert result.reply == reply
    assert hub.state("light.kitchen") == "off" and hub.state("light.kuechenlampe") == "off"


@pytest.mark.parametrize("text, language, key", [
    ("where does my data go?", "en", "about.data"),
    ("Wo sind meine Daten?", "de", "about.data"),
    ("are you always listening?", "en", "about.listening"),
    ("qui t'a créé ?", "fr", "about.creator"),
])
async def test_questions_about_the_hub_get_its_own_answer(tmp_path, text, language, key) -> None:
    """HassRespond's questions about the assistant: HA's replies are about HA ("Your data is sent
    to your Home Assistant server"); the hub answers for itself, in the request's language."""
    from hub.locales import phrase

    hub = TestHub(tmp_path, ScriptedEngine([]), fast_path=True)
    result = await hub.ask(text, language=language)
    assert result.path == "fast_path" and not result.tool_calls
    assert result.reply == phrase(language, key)


@pytest.mark.parametrize("text, language, kept", [
    ("izklopi luči", "sl", "light.bedroom"),  # 2025.6: "all" lights in the home; now the room's
    ("ugasni vse luči", "sl", "light.bedroom"),
])
async def test_the_newest_release_reads_a_room_command_as_has_does(tmp_path, text, language, kept) -> None:
    hub = TestHub(tmp_path, ScriptedEngine([]), fast_path=True)
    hub.store.update_state("light.kitchen", "on", {})
    hub.store.update_state(kept, "on", {})
    result = await hub.ask(text, language=language, area="Kitchen")
    assert [c.call.arguments.get("entity_id") for c in result.tool_calls] == ["light.kitchen"], result.reply
    assert hub.state(kept) == "on"


async def test_the_newest_release_hears_a_kind_where_the_older_heard_a_name(tmp_path) -> None:
    """zh "把空调设置为18度" said in a room: the room's air conditioning (HA's newest templates), not a
    device elsewhere named 空调 (2025.6's "{name}" reading)."""
    hub = TestHub(tmp_path, ScriptedEngine([]), fast_path=True)
    hub.store.upsert(Entity("climate.ac", "空调", "cool", {"temperature": 24, "min_temp": 7, "max_temp": 35},
                            area="Office", source="demo"))
    result = await hub.ask("把空调设置为18度", language="zh", area="Living room")
    assert [c.call.arguments.get("entity_id") for c in result.tool_calls] == ["climate.living_room"], result.reply
    assert hub.store.get("climate.ac").attributes["temperature"] == 24


async def test_a_thermostat_reporting_its_temperature_as_text_is_answered(tmp_path) -> None:
    """Some integrations write "20.5": the answer says it, the turn does not fail."""
    hub = TestHub(tmp_path, ScriptedEngine([]), fast_path=True)
    thermostat = hub.store.get("climate.living_room")
    hub.store.update_state(thermostat.entity_id, "heat", {**thermostat.attributes, "current_temperature": "20.5"})
    result = await hub.ask("what is the temperature in the living room?")
    assert result.ok and result.path == "fast_path" and "20.5" in result.reply, result.reply
