"""HomeAssistantBackend against a real Home Assistant core: loading, service calls, events,
a refused token, HA unreachable, and recovery when HA comes back."""

from __future__ import annotations

import asyncio
import time
from typing import Any, AsyncIterator, Callable

import pytest

from ha.ha_harness import HomeAssistantInstance, TcpProxy, free_port
from hub.config import validate
from hub.options import hub_options
from hub.home.entities import BackendError, Entity, EntityStore
from hub.backends.ha.client import HAClient, HAEndpoint, HARequestError
from hub.backends.ha.registry import HomeAssistantBackend
from hub.backends.ha.services import HomeAssistantAuthError, HomeAssistantUnavailable

pytestmark = pytest.mark.timeout(180)

FAST_RETRY = (0.2, 0.5, 1.0)


def backend_for(url: str, token: str, store: EntityStore, **options: Any) -> HomeAssistantBackend:
    config = validate({"ha_url": url, "ha_token": token, **options})
    return HomeAssistantBackend(hub_options(config).home_assistant, store, environ={}, reconnect_delays=FAST_RETRY, auth_retry_s=0.5)


@pytest.fixture
async def connected(ha: HomeAssistantInstance) -> AsyncIterator[tuple[HomeAssistantBackend, EntityStore]]:
    store = EntityStore()
    backend = backend_for(ha.url, ha.token, store)
    await backend.start(wait_s=30)
    assert backend.status == "connected", backend.last_error
    yield backend, store
    await backend.stop()


async def eventually(check: Callable[[], Any], timeout: float = 15.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


async def test_loads_exposed_entities_with_areas_aliases_and_classes(connected) -> None:
    backend, store = connected
    ids = {e.entity_id for e in store.all()}
    assert ids == {
        "light.living_room_light", "light.kitchen_light", "light.bedroom_lamp",
        "switch.coffee_machine", "sensor.living_room_temperature", "cover.garage_door",
    }, "exactly what HA exposes to Assist (no input helpers, no backup sensors)"
    lamp = store.get("light.living_room_light")
    assert (lamp.name, lamp.area, lamp.source) == ("Living Room Light", "Living Room", "ha")
    assert set(lamp.aliases) == {"Main lamp", "Wohnzimmerlampe"}
    assert lamp.state == "off" and lamp.attributes["friendly_name"] == "Living Room Light"
    assert store.get("switch.coffee_machine").area == "Kitchen"
    assert store.get("switch.coffee_machine").aliases == ("Espresso maker",)
    sensor = store.get("sensor.living_room_temperature")
    assert sensor.device_class == "temperature" and float(sensor.state) == 21.5
    assert set(store.area_aliases()["Living Room"]) == {"Lounge", "Wohnzimmer"}
    assert set(store.area_aliases()["Kitchen"]) == {"Küche"}


async def test_include_and_exclude_options(ha: HomeAssistantInstance) -> None:
    store = EntityStore()
    backend = backend_for(ha.url, ha.token, store, include_entities="input_boolean.guest_mode, input_number.*",
                          exclude_entities="light.bed*")
    await backend.start(wait_s=30)
    try:
        ids = {e.entity_id for e in store.all()}
        assert "input_boolean.guest_mode" in ids and "input_number.living_room_light_level" in ids
        assert "light.bedroom_lamp" not in ids and "light.kitchen_light" in ids
        assert "input_boolean.kitchen_light_power" not in ids
        # an entity the options exclude cannot be controlled, even when named directly
        bedroom = Entity("light.bedroom_lamp", "Bedroom Lamp", source="ha")
        with pytest.raises(BackendError, match="not an entity the hub may control"):
            await backend.call_service(bedroom, "turn_on", {})
        assert (await ha.state("light.bedroom_lamp"))["state"] == "off"
    finally:
        await backend.stop()


async def test_expose_all(ha: HomeAssistantInstance) -> None:
    store = EntityStore()
    backend = backend_for(ha.url, ha.token, store, expose="all")
    await backend.start(wait_s=30)
    try:
        ids = {e.entity_id for e in store.all()}
        assert {"input_boolean.guest_mode", "light.living_room_light", "input_number.living_room_temperature"} <= ids
    finally:
        await backend.stop()


async def test_service_call_turns_a_real_light_on_and_dims_it(connected, ha: HomeAssistantInstance) -> None:
    backend, store = connected
    lamp = store.get("light.living_room_light")
    await backend.call_service(lamp, "turn_on", {})
    assert (await ha.state("light.living_room_light"))["state"] == "on"
    assert store.get("light.living_room_light").state == "on", "the store has the new state when the call returns"
    await backend.call_service(lamp, "turn_on", {"brightness_pct": 40})
    assert (await ha.state("input_number.living_room_light_level"))["state"] == "102.0"
    await eventually(lambda: store.get("light.living_room_light").attributes.get("brightness") == 102, what="brightness")
    await backend.call_service(lamp, "turn_off", {})
    assert (await ha.state("light.living_room_light"))["state"] == "off"


async def test_service_ha_rejects_is_a_clear_backend_error(connected) -> None:
    backend, store = connected
    with pytest.raises(BackendError, match="HTTP 400"):
        await backend.call_service(store.get("light.kitchen_light"), "fly_to_the_moon", {})
    with pytest.raises(BackendError, match="invalid service name"):
        await backend.call_service(store.get("light.kitchen_light"), "../states", {})


async def test_state_changes_made_in_ha_reach_the_store(connected, ha: HomeAssistantInstance) -> None:
    backend, store = connected
    await ha.call_service("input_boolean", "turn_on", entity_id="input_boolean.kitchen_light_power")
    await eventually(lambda: store.get("light.kitchen_light").state == "on", what="kitchen light on in the store")
    await ha.call_service("input_number", "set_value", entity_id="input_number.living_room_temperature", value=19)
    await eventually(lambda: store.get("sensor.living_room_temperature").state == "19.0", what="temperature")
    await ha.call_service("input_number", "set_value", entity_id="input_number.living_room_temperature", value=21.5)


async def test_registry_changes_reload_the_entities(connected, ha: HomeAssistantInstance) -> None:
    backend, store = connected
    loads = backend.loads
    version = store.version
    try:
        await ha.ws("config/entity_registry/update", entity_id="light.kitchen_light", aliases=["Cooking light"])
        await eventually(lambda: store.get("light.kitchen_light").aliases == ("Cooking light",), what="new alias")
        assert backend.loads > loads and store.version > version
        await ha.ws("config/entity_registry/update", entity_id="light.kitchen_light",
                    options_domain="conversation", options={"should_expose": False})
        await eventually(lambda: "light.kitchen_light" not in store, what="unexposed entity to leave the store")
    finally:
        await ha.ws("config/entity_registry/update", entity_id="light.kitchen_light", aliases=[])
        await ha.ws("config/entity_registry/update", entity_id="light.kitchen_light",
                    options_domain="conversation", options={"should_expose": True})
    await eventually(lambda: "light.kitchen_light" in store, what="re-exposed entity to return")


async def test_refused_token(ha: HomeAssistantInstance) -> None:
    store = EntityStore()
    backend = backend_for(ha.url, "not-a-valid-token", store)
    await backend.start(wait_s=2)
    try:
        assert backend.status == "auth_failed" and "refused the access token" in backend.last_error
        assert len(store) == 0
        lamp = Entity("light.living_room_light", "Living Room Light", source="ha")
        backend._allowed.add(lamp.entity_id)  # as if loaded before the token was revoked
        with pytest.raises(HomeAssistantAuthError, match="refused the hub's access token") as caught:
            await backend.call_service(lamp, "turn_on", {})
        assert isinstance(caught.value, BackendError) and caught.value.code == "ha_auth"
        await asyncio.sleep(1.2)
        assert not backend._task.done(), "the connection loop keeps retrying"
        assert (await ha.state("light.living_room_light"))["state"] == "off"
    finally:
        await backend.stop()


async def test_unreachable_home_assistant(ha: HomeAssistantInstance) -> None:
    store = EntityStore()
    backend = backend_for(f"http://127.0.0.1:{free_port()}", ha.token, store)
    await backend.start(wait_s=1)
    try:
        assert backend.status in ("unavailable", "connecting") and "unavailable" in backend.last_error
        lamp = Entity("light.living_room_light", "Living Room Light", source="ha")
        backend._allowed.add(lamp.entity_id)
        with pytest.raises(HomeAssistantUnavailable, match="Home Assistant unavailable") as caught:
            await backend.call_service(lamp, "turn_on", {})
        assert caught.value.code == "ha_unavailable"
        assert not backend._task.done()
    finally:
        await backend.stop()


async def test_connection_cut_and_restored(ha: HomeAssistantInstance) -> None:
    proxy = TcpProxy(ha.port)
    await proxy.start()
    store = EntityStore()
    backend = backend_for(proxy.url, ha.token, store)
    try:
        await backend.start(wait_s=30)
        assert backend.status == "connected"
        await proxy.pause()
        await eventually(lambda: backend.status != "connected", what="the backend to notice")
        lamp = store.get("light.bedroom_lamp")
        assert lamp is not None, "the last known entities stay while HA is away"
        with pytest.raises(HomeAssistantUnavailable):
            await backend.call_service(lamp, "turn_on", {})
        await ha.call_service("input_boolean", "turn_on", entity_id="input_boolean.coffee_machine_power")
        await proxy.start()
        await asyncio.wait_for(backend.loaded.wait(), 20)
        assert backend.status == "connected"
        assert store.get("switch.coffee_machine").state == "on", "changes made while away arrive on reconnect"
        await backend.call_service(lamp, "turn_on", {})
        assert (await ha.state("light.bedroom_lamp"))["state"] == "on"
    finally:
        await backend.stop()
        await proxy.stop()


async def test_home_assistant_restart(ha: HomeAssistantInstance) -> None:
    store = EntityStore()
    backend = backend_for(ha.url, ha.token, store)
    await backend.start(wait_s=30)
    try:
        await asyncio.to_thread(ha.stop)
        await eventually(lambda: backend.status != "connected", what="the backend to notice HA stopping")
        with pytest.raises(HomeAssistantUnavailable, match="Home Assistant unavailable"):
            await backend.call_service(store.get("light.kitchen_light"), "turn_on", {})
        await asyncio.to_thread(ha.start)
        await asyncio.wait_for(backend.loaded.wait(), 60)
        await backend.call_service(store.get("light.kitchen_light"), "turn_on", {})
        assert (await ha.state("light.kitchen_light"))["state"] == "on"
        assert store.get("light.kitchen_light").state == "on"
    finally:
        await backend.stop()


async def test_rest_client_directly(ha: HomeAssistantInstance) -> None:
    client = HAClient(HAEndpoint.from_url(ha.url + "/api/", ha.token))
    try:
        states = {s["entity_id"]: s for s in await client.get_states()}
        assert states["light.kitchen_light"]["state"] == "off"
        changed = await client.call_service("light", "turn_on", {"entity_id": "light.kitchen_light"})
        assert any(s["entity_id"] == "light.kitchen_light" and s["state"] == "on" for s in changed)
        with pytest.raises(HARequestError, match="404"):
            await client.get_state("light.does_not_exist")
    finally:
        await client.close()
