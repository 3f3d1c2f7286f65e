"""The home of bench/data/real_home.yaml (issue #40) in a real Home Assistant 2025.4.4: every device
announced by MQTT device discovery (its entity categories, device classes and units, each device
in its area on its floor), read by HA's MQTT integration into its registries; the media players
HA's "universal" platform over input_select helpers (HA's MQTT integration has none); the to-do
lists HA's local_todo, made by its config flow and filled by `todo.add_item`.

`Devices` answers the devices' commands as the devices would (a vacuum reports cleaning or
docked, a lock locked, unlocked or — the Back Door — jammed) and records them; `judged` tells
whether a turn did what HA's handler would: exactly the commands expected on the devices' topics
(the players' states, the lists' items as HA holds them), or a question naming the candidates and
nothing done.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from ha.ha_harness import HomeAssistantInstance
from mqtt.mqtt_helpers import Sniffer
from tests.home.real_home import Part, Request, floors, jamming, media_players, parts, slug, todo_lists

BASE = "realhome"
ORIGIN = {"name": "bolt-hub tests"}
# service → (command topic's last part, payload) for the MQTT devices; None: any payload
_COMMANDS: dict[tuple[str, str], tuple[str, str | None]] = {
    **{(d, "turn_on"): ("set", "ON") for d in ("light", "switch", "fan")},
    **{(d, "turn_off"): ("set", "OFF") for d in ("light", "switch", "fan")},
    ("cover", "open_cover"): ("set", "OPEN"), ("cover", "close_cover"): ("set", "CLOSE"),
    ("valve", "open_valve"): ("set", "OPEN"), ("valve", "close_valve"): ("set", "CLOSE"),
    ("lock", "lock"): ("set", "LOCK"), ("lock", "unlock"): ("set", "UNLOCK"),
    ("vacuum", "start"): ("command", "start"), ("vacuum", "return_to_base"): ("command", "return_to_base"),
    ("lawn_mower", "start_mowing"): ("start", None), ("lawn_mower", "dock"): ("dock", None),
    ("climate", "set_temperature"): ("temperature", None), ("button", "press"): ("press", "PRESS"),
}
_PLAYER_STATES = {"media_play": "playing", "media_pause": "paused", "turn_off": "off", "turn_on": "idle"}


def topic(entity_id: str, command: str) -> str:
    return f"{BASE}/{entity_id.replace('.', '_')}/{command}"


def _component(part: Part) -> dict[str, Any]:
    """One entity's discovery config (its command and state topics under `BASE`)."""
    options, eid = part.options, part.entity_id
    config: dict[str, Any] = {"p": part.component, "name": part.suffix, "unique_id": f"{BASE}_{eid.replace('.', '_')}",
                              "object_id": eid.split(".", 1)[1]}
    for key, value in (("device_class", options.get("device_class")), ("entity_category", options.get("category")),
                       ("unit_of_measurement", options.get("unit"))):
        if value is not None:
            config[key] = value
    component = part.component
    if component in ("sensor", "binary_sensor", "vacuum", "lock"):
        config["state_topic"] = topic(eid, "state")
    if component in ("light", "switch", "fan", "cover", "valve", "lock"):
        config["command_topic"] = topic(eid, "set")
        config["optimistic"] = component != "lock"
    if component == "vacuum":
        config.update(command_topic=topic(eid, "command"), supported_features=["start", "stop", "return_home", "status"])
    if component == "lawn_mower":
        config.update(optimistic=True, start_mowing_command_topic=topic(eid, "start"),
                      dock_command_topic=topic(eid, "dock"), pause_command_topic=topic(eid, "pause"))
    if component == "button":
        config["command_topic"] = topic(eid, "press")
    if component == "climate":
        attributes = options.get("attributes") or {}
        config.update(optimistic=True, modes=attributes.get("hvac_modes", ["off", "heat"]),
                      mode_command_topic=topic(eid, "mode"), temperature_command_topic=topic(eid, "temperature"),
                      min_temp=attributes.get("min_temp", 7), max_temp=attributes.get("max_temp", 30))
    return config


def discovery() -> dict[str, dict[str, Any]]:
    """Each device's discovery topic → its payload (HA's device-based discovery, 2024.11+)."""
    payloads: dict[str, dict[str, Any]] = {}
    for part in parts():
        device = part.device
        payload = payloads.setdefault(f"homeassistant/device/{BASE}_{device['key']}/config", {
            "dev": {"ids": [f"{BASE}_{device['key']}"], "name": device["name"], "sa": device["area"]},
            "o": ORIGIN, "cmps": {}})
        payload["cmps"][slug(part.suffix or part.component)] = _component(part)
    return payloads


def states() -> dict[str, str]:
    """The state topics' first payloads."""
    found = {}
    for part in parts():
        state = part.options.get("state")
        if part.component == "vacuum":
            found[topic(part.entity_id, "state")] = json.dumps({"state": state})
        elif part.component == "lock":
            found[topic(part.entity_id, "state")] = str(state).upper()
        elif part.component == "binary_sensor":
            found[topic(part.entity_id, "state")] = "ON" if state == "on" else "OFF"
        elif part.component == "sensor":
            found[topic(part.entity_id, "state")] = str(state)
    return found


def players_yaml() -> str:
    """HA configuration for the media players: input_select helpers and universal players."""
    selects, players = ["input_select:"], ["media_player:"]
    for entity_id, name, _, state in media_players():
        key = entity_id.split(".", 1)[1]
        selects += [f"  {key}_state: {{name: {name} state, options: [playing, paused, idle, 'off'], initial: '{state}'}}",
                    f"  {key}_mute: {{name: {name} mute, options: [unmuted, muted], initial: unmuted}}"]
        select = f"input_select.{key}_state"

        def option(value: str, select: str = select) -> str:
            return (f"{{action: input_select.select_option, target: {{entity_id: {select}}}, "
                    f"data: {{option: '{value}'}}}}")
        mute = (f"{{action: input_select.select_option, target: {{entity_id: input_select.{key}_mute}}, "
                "data: {option: \"{{ 'muted' if is_volume_muted else 'unmuted' }}\"}}")
        players += ["  - platform: universal", f"    name: {name}", f"    unique_id: {BASE}_{key}",
                    f"    device_class: {'tv' if 'TV' in name else 'speaker'}",
                    f"    state_template: \"{{{{ states('{select}') }}}}\"",
                    f"    attributes: {{is_volume_muted: input_select.{key}_mute}}",
                    "    commands:", f"      turn_on: {option('idle')}", f"      turn_off: {option('off')}",
                    f"      media_play: {option('playing')}", f"      media_pause: {option('paused')}",
                    f"      media_stop: {option('idle')}", f"      volume_mute: {mute}"]
    return "\n" + "\n".join(selects + players) + "\n"


class Devices(Sniffer):
    """The devices on the broker: they announce themselves, answer commands, and are recorded."""

    def __init__(self, port: int) -> None:
        super().__init__(port, [f"{BASE}/#"])
        self.client.message_callback_add(f"{BASE}/+/command", self._vacuum)
        self.client.message_callback_add(f"{BASE}/+/set", self._lock)

    def announce(self) -> None:
        for discovery_topic, payload in discovery().items():
            self.publish(discovery_topic, payload, retain=True)
        for state_topic, payload in states().items():
            self.publish(state_topic, payload, retain=True)

    def _vacuum(self, client: Any, userdata: Any, msg: Any) -> None:
        self._on_message(client, userdata, msg)
        state = {"start": "cleaning", "return_to_base": "docked", "stop": "idle"}.get(msg.payload.decode())
        if state:
            client.publish(msg.topic.rsplit("/", 1)[0] + "/state", json.dumps({"state": state}), retain=True)

    def _lock(self, client: Any, userdata: Any, msg: Any) -> None:
        self._on_message(client, userdata, msg)
        device = msg.topic.split("/")[1]
        if not device.startswith("lock_"):
            return
        jams = f"lock.{device[5:]}" in jamming()
        state = {"LOCK": "JAMMED" if jams else "LOCKED", "UNLOCK": "UNLOCKED"}.get(msg.payload.decode())
        if state:
            client.publish(f"{BASE}/{device}/state", state, retain=True)

    def commands(self) -> list[tuple[str, str]]:
        """The commands sent to the devices so far (not their states)."""
        return [(t, p.decode()) for t, p, _ in list(self.messages) if not t.endswith("/state")]


async def set_up(ha: HomeAssistantInstance, devices: Devices) -> None:
    """Floors and areas, the devices announced and placed, the lists made, every entity exposed
    to Assist."""
    existing = {a["name"]: a["area_id"] for a in await ha.ws("config/area_registry/list")}
    for floor, spec in floors().items():
        created = await ha.ws("config/floor_registry/create", name=floor, aliases=spec.get("aliases") or [])
        for area in spec["areas"]:
            if area in existing:
                await ha.ws("config/area_registry/update", area_id=existing[area], floor_id=created["floor_id"])
            else:
                await ha.ws("config/area_registry/create", name=area, floor_id=created["floor_id"])
    devices.announce()
    for _, name, _ in todo_lists():
        flow = await ha.rest("POST", "/api/config/config_entries/flow", {"handler": "local_todo"})
        made = await ha.rest("POST", f"/api/config/config_entries/flow/{flow['flow_id']}", {"todo_list_name": name})
        assert made.get("type") == "create_entry", made
    wanted = {p.entity_id for p in parts()} | {e for e, *_ in media_players()} | {e for e, *_ in todo_lists()}
    deadline = time.monotonic() + 90
    while wanted - {s["entity_id"] for s in await ha.states()}:
        if time.monotonic() > deadline:
            raise ha.failure(f"HA did not create {sorted(wanted - {s['entity_id'] for s in await ha.states()})}")
        await asyncio.sleep(0.5)
    areas = {a["name"]: a["area_id"] for a in await ha.ws("config/area_registry/list")}
    for entity_id, _, area, _ in media_players():
        await ha.ws("config/entity_registry/update", entity_id=entity_id, area_id=areas[area])
    await ha.ws("homeassistant/expose_entity", assistants=["conversation"], entity_ids=sorted(wanted), should_expose=True)
    await reset_lists(ha)


async def list_items(ha: HomeAssistantInstance, entity_id: str) -> dict[str, str]:
    """The list's items as HA holds them: summary → status."""
    answer = await ha.rest("POST", "/api/services/todo/get_items?return_response",
                           {"entity_id": entity_id, "status": ["needs_action", "completed"]})
    return {i["summary"]: i["status"] for i in answer["service_response"][entity_id]["items"]}


async def reset_lists(ha: HomeAssistantInstance) -> None:
    """Each list back to its items, all still to do."""
    for entity_id, _, items in todo_lists():
        held = await list_items(ha, entity_id)
        if held == dict.fromkeys(items, "needs_action"):
            continue
        if held:
            await ha.call_service("todo", "remove_item", entity_id=entity_id, item=list(held))
        for item in items:
            await ha.call_service("todo", "add_item", entity_id=entity_id, item=item)


async def reset_players(ha: HomeAssistantInstance) -> None:
    for entity_id, _, _, state in media_players():
        key = entity_id.split(".", 1)[1]
        await ha.call_service("input_select", "select_option", entity_id=f"input_select.{key}_state", option=state)
        await ha.call_service("input_select", "select_option", entity_id=f"input_select.{key}_mute", option="unmuted")


async def judged(request: Request, ha: HomeAssistantInstance, commands: list[tuple[str, str]],
                 reply: str, names: dict[str, str]) -> tuple[bool, str]:
    """Whether the turn did what HA's handler would: `commands` those it caused on the devices."""
    if request.says and request.says.casefold() not in reply.casefold():
        return False, f"the reply does not say {request.says!r}: {reply!r}"
    if request.ask:
        missing = [names[i] for i in request.ask if names[i] not in reply]
        ok = not commands and not missing and reply.rstrip().endswith("?")
        return ok, "" if ok else f"did {commands}, reply {reply!r}"
    wanted, players = [], {}
    lists = {entity_id: {i.casefold(): "needs_action" for i in items} for entity_id, _, items in todo_lists()}
    for entity_id, service, data in request.calls:
        domain = entity_id.split(".", 1)[0]
        if domain == "todo":
            _listed(lists[entity_id], service, dict(data))
            continue
        if domain == "media_player":
            players[entity_id] = "muted" if service == "volume_mute" else _PLAYER_STATES[service]
            continue
        command, payload = _COMMANDS[(domain, service)]
        if service == "set_temperature":
            payload = None
        wanted.append((topic(entity_id, command), payload))
    matched = len(commands) == len(wanted) and all(
        any(t == w_topic and (w_payload is None or p == w_payload) for t, p in commands) for w_topic, w_payload in wanted)
    for entity_id, state in players.items():
        key = entity_id.split(".", 1)[1]
        helper = f"input_select.{key}_{'mute' if state == 'muted' else 'state'}"
        matched = matched and (await ha.state(helper))["state"] == state
    held = {e: {i.casefold(): s for i, s in (await list_items(ha, e)).items()} for e in lists}
    matched = matched and held == lists
    return matched, "" if matched else f"did {commands}, lists {held}, reply {reply!r}"


def _listed(items: dict[str, str], service: str, data: dict[str, Any]) -> None:
    """`items` (casefolded summary → status) as the call leaves them."""
    item = str(data["item"]).casefold()
    if service == "remove_item":
        del items[item]
    else:
        items[item] = str(data.get("status", "needs_action"))
