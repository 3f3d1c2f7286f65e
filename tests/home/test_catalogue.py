"""Every home tool on the demo home, called the way the agent calls them: through ToolRegistry."""

from __future__ import annotations

import pytest

from hub.home.catalogue import build_home_tools
from hub.backends.demo.home import DemoBackend, load_demo_home
from hub.home.entities import EntityStore
from hub.home.resolve import EntityResolver
from hub.core.tools import ToolContext, ToolRegistry, ToolResult
from hub.core.messages import ToolCall
from hub.locales import phrase

EN = ToolContext("test", language="en")
DE = ToolContext("test", language="de")


class Home:
    def __init__(self) -> None:
        self.store = EntityStore()
        self.backend: DemoBackend = load_demo_home(self.store)
        self.registry = ToolRegistry()
        for tool in build_home_tools(self.store, EntityResolver(self.store)):
            self.registry.register(tool)

    async def call(self, name: str, ctx: ToolContext = EN, **args) -> ToolResult:
        return await self.registry.call(ToolCall(name, args), ctx)

    def state(self, entity_id: str) -> str:
        return self.store.get(entity_id).state

    def attr(self, entity_id: str, key: str):
        return self.store.get(entity_id).attributes.get(key)


@pytest.fixture
def home() -> Home:
    return Home()


def test_catalogue_names_and_entity_args(home: Home) -> None:
    assert home.registry.names() == [
        "turn_on", "turn_off", "set_light", "set_temperature", "set_position", "media_control",
        "set_volume", "set_fan_speed", "change_volume", "mute", "clean_area", "set_humidity", "set_mode", "set_fan_mode",
        "search_and_play",
        "activate_scene", "run_script", "get_state"]
    for name in home.registry.names():
        tool = home.registry.get(name)
        assert tool.spec.entity_args == ("entity_id",)
        assert "entity_id" in tool.spec.parameters["properties"]
        assert len(tool.spec.description) < 100  # every token is prefill on every turn


@pytest.mark.parametrize("entity_id, on_state, off_state", [
    ("light.kitchen", "on", "off"),
    ("switch.coffee_machine", "on", "off"),
    ("cover.bedroom_blinds", "open", "closed"),
    ("climate.living_room", "heat", "off"),
    ("media_player.living_room_speaker", "idle", "off"),
])
async def test_turn_on_and_off(home: Home, entity_id: str, on_state: str, off_state: str) -> None:
    result = await home.call("turn_off", entity_id=entity_id)
    assert result.ok, result.data
    assert home.state(entity_id) == off_state == result.data["state"]
    assert result.changed_entities == (entity_id,)
    result = await home.call("turn_on", entity_id=entity_id)
    assert result.ok, result.data
    assert home.state(entity_id) == on_state == result.data["state"]


async def test_turn_on_speaks_in_the_callers_language(home: Home) -> None:
    english = await home.call("turn_on", entity_id="light.kitchen")
    german = await home.call("turn_on", DE, entity_id="light.bedroom")
    assert english.speech == phrase("en", "action.turned_on", name="Kitchen light")
    assert german.speech == phrase("de", "action.turned_on", name="Bedroom light")
    assert german.speech != phrase("en", "action.turned_on", name="Bedroom light")
    closed = await home.call("turn_off", entity_id="cover.bedroom_blinds")
    assert closed.speech == phrase("en", "action.reported", name="Bedroom blinds",
                                   state=phrase("en", "state.closed"))


async def test_unknown_entity_is_refused_with_suggestions(home: Home) -> None:
    result = await home.call("turn_on", entity_id="light.kitchn")
    assert not result.ok
    assert result.data["error"] == "unknown_entity"
    assert "kitchn" in result.data["message"] and "light." not in result.data["message"]
    assert "light.kitchen" in result.data["suggestions"]
    german = await home.call("turn_on", DE, entity_id="light.garage")
    assert german.data["message"] == phrase("de", "entity.not_found", name="garage")


async def test_wrong_domain_is_unsupported(home: Home) -> None:
    before = [(e.entity_id, e.state, e.attributes) for e in home.store.all()]
    for name, args in [
        ("set_temperature", {"entity_id": "light.kitchen", "temperature": 20}),
        ("set_light", {"entity_id": "switch.coffee_machine", "brightness": 20}),
        ("set_position", {"entity_id": "light.kitchen", "position": 20}),
        ("media_control", {"entity_id": "light.kitchen", "action": "pause"}),
        ("set_volume", {"entity_id": "cover.bedroom_blinds", "volume": 20}),
        ("activate_scene", {"entity_id": "script.good_night"}),
        ("run_script", {"entity_id": "scene.movie_night"}),
        ("turn_off", {"entity_id": "scene.movie_night"}),
        ("turn_on", {"entity_id": "sensor.outside_temperature"}),
    ]:
        result = await home.call(name, **args)
        assert not result.ok and result.data["error"] == "unsupported", (name, result.data)
        entity = home.store.get(args["entity_id"])
        # the message is the sentence the user hears; what exactly is wrong is the model's detail
        assert result.data["message"] == phrase("en", "error.unsupported", name=entity.name)
        assert name in result.data["detail"]
    assert [(e.entity_id, e.state, e.attributes) for e in home.store.all()] == before
    assert home.backend.calls == []


async def test_locks_are_refused_here(home: Home) -> None:
    for name in ("turn_on", "turn_off"):
        result = await home.call(name, entity_id="lock.front_door")
        assert not result.ok and result.data["error"] == "not_allowed"
    assert home.state("lock.front_door") == "locked"
    assert home.backend.calls == []


@pytest.mark.parametrize("name, args", [
    ("set_light", {"entity_id": "light.kitchen", "brightness": 140}),
    ("set_light", {"entity_id": "light.kitchen", "brightness": "bright"}),
    ("set_light", {"entity_id": "light.kitchen"}),
    ("set_light", {"entity_id": "light.kitchen", "color": "ultraviolet"}),
    ("set_light", {"entity_id": "light.kitchen", "color": "#12345"}),
    ("set_light", {"entity_id": "light.kitchen", "color": "#GG0000"}),
    ("set_temperature", {"entity_id": "climate.living_room"}),
    ("set_temperature", {"entity_id": "climate.living_room", "temperature": 95}),
    ("set_position", {"entity_id": "cover.bedroom_blinds", "position": -5}),
    ("media_control", {"entity_id": "media_player.living_room_speaker", "action": "rewind"}),
    ("set_volume", {"entity_id": "media_player.living_room_speaker", "volume": 101}),
    ("turn_on", {}),
    ("turn_on", {"entity_id": "light.kitchen", "brightness": 50}),
    ("get_state", {}),
])
async def test_invalid_arguments_change_nothing(home: Home, name: str, args: dict) -> None:
    before = [(e.entity_id, e.state, e.attributes) for e in home.store.all()]
    result = await home.call(name, **args)
    assert not result.ok
    assert result.data["error"] == "invalid_arguments"
    assert result.data["message"]
    assert [(e.entity_id, e.state, e.attributes) for e in home.store.all()] == before


async def test_set_light_brightness_and_color(home: Home) -> None:
    result = await home.call("set_light", entity_id="light.kitchen", brightness=40, color="Red")
    assert result.ok
    assert home.state("light.kitchen") == "on"
    assert home.attr("light.kitchen", "brightness") == round(40 * 255 / 100)
    assert tuple(home.attr("light.kitchen", "rgb_color")) == (255, 0, 0)
    assert result.data["brightness"] == 40 and "40" in result.speech
    assert home.backend.calls[-1] == ("light.kitchen", "turn_on",
                                      {"brightness_pct": 40, "color_name": "red"})
    result = await home.call("set_light", entity_id="light.kitchen", color="#000AC8")
    assert result.ok and tuple(home.attr("light.kitchen", "rgb_color")) == (0, 10, 200)
    assert home.backend.calls[-1][2] == {"rgb_color": [0, 10, 200]}
    result = await home.call("set_light", entity_id="light.kitchen", brightness=0)
    assert result.ok and home.state("light.kitchen") == "off"


async def test_set_light_respects_supported_color_modes(home: Home) -> None:
    entity = home.store.get("light.bedroom")
    home.store.update_state(entity.entity_id, "off", {"supported_color_modes": ["brightness"]})
    result = await home.call("set_light", entity_id="light.bedroom", color="blue")
    assert not result.ok and result.data["error"] == "unsupported"
    assert (await home.call("set_light", entity_id="light.bedroom", brightness=30)).ok


async def test_set_temperature(home: Home) -> None:
    result = await home.call("set_temperature", DE, entity_id="climate.living_room", temperature=22.5)
    assert result.ok
    assert home.attr("climate.living_room", "temperature") == 22.5
    assert result.data["temperature"] == 22.5
    assert "22,5" in result.speech  # German decimal comma
    assert home.backend.calls[-1] == ("climate.living_room", "set_temperature", {"temperature": 22.5})


async def test_set_position(home: Home) -> None:
    result = await home.call("set_position", entity_id="cover.bedroom_blinds", position=30)
    assert result.ok and result.data["position"] == 30
    assert home.state("cover.bedroom_blinds") == "open"
    assert home.backend.calls[-1] == ("cover.bedroom_blinds", "set_cover_position", {"position": 30})


async def test_media_control_and_volume(home: Home) -> None:
    speaker = "media_player.living_room_speaker"
    assert (await home.call("media_control", entity_id=speaker, action="resume")).ok
    assert home.state(speaker) == "playing"
    assert (await home.call("media_control", entity_id=speaker, action="pause")).ok
    assert home.state(speaker) == "paused"
    title = home.attr(speaker, "media_title")
    assert (await home.call("media_control", entity_id=speaker, action="next")).ok
    assert home.attr(speaker, "media_title") != title
    assert (await home.call("media_control", entity_id=speaker, action="previous")).ok
    assert home.attr(speaker, "media_title") == title
    result = await home.call("set_volume", entity_id=speaker, volume=55)
    assert result.ok and result.data["volume"] == 55
    assert home.attr(speaker, "volume_level") == pytest.approx(0.55)


async def test_scene_and_script(home: Home) -> None:
    await home.call("turn_on", entity_id="light.floor_lamp")
    assert (await home.call("activate_scene", entity_id="scene.movie_night")).ok
    assert home.state("light.floor_lamp") == "off"
    assert home.attr("light.living_room", "brightness") == 51
    assert (await home.call("run_script", entity_id="script.good_night")).ok
    assert all(e.state == "off" for e in home.store.all() if e.domain == "light")
    assert (await home.call("turn_on", entity_id="scene.movie_night")).ok  # HA allows it too


async def test_get_state_of_entity_and_area(home: Home) -> None:
    result = await home.call("get_state", entity_id="sensor.outside_temperature")
    assert result.ok and result.data["state"] == "12.5" and result.data["unit"] == "°C"
    assert "12.5" in result.speech
    german = await home.call("get_state", DE, entity_id="sensor.outside_temperature")
    assert "12,5" in german.speech
    result = await home.call("get_state", DE, area="Küche")
    assert result.ok and result.data["area"] == "Kitchen"
    assert {e["entity_id"] for e in result.data["entities"]} == {"light.kitchen", "switch.coffee_machine"}
    lock = await home.call("get_state", entity_id="lock.front_door")  # reading a lock is fine
    assert lock.ok and lock.data["state"] == "locked"
    assert (await home.call("get_state", area="Garage")).data["error"] == "unknown_area"
    assert (await home.call("get_state", entity_id="light.nope")).data["error"] == "unknown_entity"


async def test_backend_failure_is_reported_and_changes_nothing(home: Home) -> None:
    home.backend.online = False
    result = await home.call("turn_on", entity_id="light.kitchen")
    assert not result.ok and result.data["error"] == "backend_unavailable"
    assert result.data["message"]
    assert home.state("light.kitchen") == "off"


async def test_entity_without_backend_is_reported(home: Home) -> None:
    from hub.home.entities import Entity
    home.store.upsert(Entity("light.mqtt_lamp", "MQTT lamp", source="mqtt"))
    result = await home.call("turn_on", entity_id="light.mqtt_lamp")
    assert not result.ok and result.data["error"] == "backend_unavailable"


class SilentBackend:
    """A device that takes commands but never reports a state back (an MQTT device can)."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def call_service(self, entity, service: str, data: dict) -> None:
        self.calls.append(service)


# (tool, arguments) that find the demo home as they would leave it: no device reports a change
ALREADY_SO = [
    ("turn_off", {"entity_id": "light.kitchen"}),
    ("set_light", {"entity_id": "light.desk_lamp", "brightness": 100}),
    ("set_light", {"entity_id": "light.desk_lamp", "color": "white"}),
    ("set_light", {"entity_id": "light.desk_lamp", "color": "#FFFFFF", "brightness": 100}),
    ("set_light", {"entity_id": "light.kitchen", "brightness": 0}),  # 0 % turns it off: it is
    ("set_temperature", {"entity_id": "climate.living_room", "temperature": 21}),
    ("set_position", {"entity_id": "cover.bedroom_blinds", "position": 0}),
    ("set_volume", {"entity_id": "media_player.living_room_speaker", "volume": 30}),
    ("media_control", {"entity_id": "media_player.living_room_speaker", "action": "pause"}),
]
# ... and ones that change something, or may: the tool waits for the device's report
CHANGING = [
    ("turn_on", {"entity_id": "light.kitchen"}),
    ("set_light", {"entity_id": "light.desk_lamp", "brightness": 50}),
    ("set_light", {"entity_id": "light.desk_lamp", "color": "red"}),
    ("set_light", {"entity_id": "light.desk_lamp", "color": "white", "brightness": 50}),
    ("set_light", {"entity_id": "light.kitchen", "brightness": 100}),  # off: it turns on
    ("set_light", {"entity_id": "light.living_room", "brightness": 71}),  # 180 of 255 is 70.6 %
    ("set_temperature", {"entity_id": "climate.living_room", "temperature": 21.5}),
    ("set_position", {"entity_id": "cover.bedroom_blinds", "position": 40}),
    ("set_volume", {"entity_id": "media_player.living_room_speaker", "volume": 31}),
    ("media_control", {"entity_id": "media_player.living_room_speaker", "action": "resume"}),
    ("media_control", {"entity_id": "media_player.living_room_speaker", "action": "next"}),
]


@pytest.fixture
def silent(home: Home, monkeypatch) -> SilentBackend:
    """The demo home's devices, silent: a tool that waits for their report would wait 60 s."""
    import hub.home.entity_tool as entity_tool

    monkeypatch.setattr(entity_tool, "STATE_ECHO_TIMEOUT_S", 60.0)  # a wait would be unmissable
    backend = SilentBackend()
    home.store.register_backend("demo", backend)
    return backend


@pytest.mark.parametrize("tool, args", ALREADY_SO)
async def test_a_command_that_changes_nothing_does_not_wait_for_an_echo(home: Home, silent: SilentBackend,
                                                                        tool: str, args: dict) -> None:
    import asyncio

    before = home.store.get(args["entity_id"])
    result = await asyncio.wait_for(home.call(tool, **args), 10)
    assert result.ok and len(silent.calls) == 1  # still sent: the device may be out of step
    assert result.data["state"] == before.state and home.store.get(args["entity_id"]) == before


@pytest.mark.parametrize("tool, args", CHANGING)
async def test_a_command_that_changes_something_waits_for_the_echo(home: Home, silent: SilentBackend,
                                                                   tool: str, args: dict) -> None:
    import asyncio

    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(home.call(tool, **args), 0.3)
    assert len(silent.calls) == 1


@pytest.mark.parametrize("state, attributes, tool, args", [
    # an off thermostat may switch to heating when given a target
    ("off", {"temperature": 21.0}, "set_temperature", {"entity_id": "climate.living_room", "temperature": 21}),
    # blinds on their way are not where they are going yet
    ("opening", {"current_position": 0}, "set_position", {"entity_id": "cover.bedroom_blinds", "position": 0}),
    # a light in colour-temperature mode changes mode when given a colour, whatever its rgb_color says
    ("on", {"brightness": 255, "rgb_color": [255, 255, 255], "color_mode": "color_temp"}, "set_light",
     {"entity_id": "light.desk_lamp", "color": "white"}),
])
async def test_a_command_whose_outcome_is_unsure_waits_as_ever(home: Home, silent: SilentBackend, state: str,
                                                              attributes: dict, tool: str, args: dict) -> None:
    import asyncio

    home.store.update_state(args["entity_id"], state, {**home.store.get(args["entity_id"]).attributes, **attributes})
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(home.call(tool, **args), 0.3)