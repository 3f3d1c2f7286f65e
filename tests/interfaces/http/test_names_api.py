"""`/api/names` against a real hub (SmolLM2, the MQTT demo home): every name and where it came
from; a name added or taken away applies at once to the fast path and the model's prompt;
an untargeted entity is acted on by nothing; bad bodies are clear 400s that change nothing; the
names survive a restart; a data folder that cannot be written changes nothing (507)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Iterator

import jsonschema
import pytest
import requests

from helpers.live_hub import TOKEN, LiveHub
from hub.interfaces.http import rest_schema

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def hub(tmp_path: Path, smollm_path: Path) -> Iterator[LiveHub]:
    live = LiveHub(tmp_path, model_path=str(smollm_path)).start()
    yield live
    live.stop()


def names(hub: LiveHub) -> dict:
    response = requests.get(f"{hub.url}/api/names", headers=AUTH, timeout=30)
    assert response.status_code == 200, response.text
    jsonschema.validate(response.json(), rest_schema.NAMES)
    return response.json()


def target(listing: dict, kind: str, name: str) -> dict:
    return next(t for t in listing[f"{kind}s" if kind != "entity" else "entities"] if t["target"] == name)


def change(hub: LiveHub, method: str, **body) -> requests.Response:
    return requests.request(method, f"{hub.url}/api/names", headers=AUTH, json=body, timeout=30)


def plan_calls(hub: LiveHub, text: str, language: str = "en") -> list[tuple[str, str | None, str]]:
    plan = requests.post(f"{hub.url}/api/plan", headers=AUTH, json={"text": text, "language": language},
                         timeout=240).json()
    return [(c["name"], c["entity_id"], c["verdict"]) for c in plan["calls"]]


def prompt(hub: LiveHub) -> str:
    return hub.app.agent.stable_request().messages[0].content


def test_names_with_their_origins_and_a_name_added_applies_at_once(hub: LiveHub) -> None:
    listing = names(hub)
    desk = target(listing, "entity", "light.desk_lamp")
    assert desk["names"][0] == {"name": "Desk Lamp", "origin": "home", "source": None, "removable": False}
    assert {"name": "Desk", "origin": "generated", "source": "Desk Lamp", "removable": False} in desk["names"]
    kitchen = target(listing, "area", "Kitchen")
    assert {"name": "Küche", "origin": "home_alias", "source": None, "removable": True} in kitchen["names"]
    assert any(n["origin"] == "translation" and n["name"] == "キッチン" for n in kitchen["names"]), kitchen
    assert plan_calls(hub, "Schließe den Pumuckl auf", "de") == []  # no device is called that (die Haustür is: the front door, English names said in German)

    added = change(hub, "POST", kind="entity", target="lock.front_door", name="  Pumuckl ")
    assert added.status_code == 200, added.text
    jsonschema.validate(added.json(), rest_schema.TARGET_NAMES)
    assert {"name": "Pumuckl", "origin": "added", "source": None, "removable": True} in added.json()["names"]
    assert plan_calls(hub, "Schließe den Pumuckl auf", "de") == [("turn_off", "lock.front_door", "would_ask")]
    assert "Pumuckl" in prompt(hub)

    again = change(hub, "POST", kind="entity", target="lock.front_door", name="pumuckl")
    assert again.status_code == 409 and again.json()["error"] == "already_named"
    # another device's name is not given (a pump that answers to "Front door", a lock to "Kitchen light")
    for entity_id, taken in (("switch.coffee_maker", "front door"), ("switch.coffee_maker", "PUMUCKL"),
                             ("lock.front_door", "Kitchen Light")):
        refused = change(hub, "POST", kind="entity", target=entity_id, name=taken)
        assert refused.status_code == 409 and refused.json()["error"] == "name_taken", refused.text
        assert refused.json()["message"].startswith(("lock.front_door (Front Door)", "light.kitchen_light"))
    assert "Kitchen Light" not in {n["name"] for n in target(names(hub), "entity", "lock.front_door")["names"]}
    area = change(hub, "POST", kind="area", target="Office", name="Study")
    assert area.status_code == 200 and any(n["name"] == "Study" for n in area.json()["names"])
    assert plan_calls(hub, "turn on the light in the study") == [("turn_on", "light.desk_lamp", "would_run")]

    # the home's name taken away: the added one is what the hub calls it now
    assert change(hub, "DELETE", kind="entity", target="lock.front_door", name="Front Door").status_code == 200
    front = target(names(hub), "entity", "lock.front_door")
    assert front["name"] == "Pumuckl" and front["removed"] == ["Front Door"]
    assert plan_calls(hub, "unlock the front door") == []
    # its question for a yes names the lock as its home does, not by the name it answers to now
    unlock = requests.post(f"{hub.url}/api/plan", headers=AUTH, timeout=240,
                           json={"text": "Schließe den Pumuckl auf", "language": "de"}).json()
    assert [c["message"] for c in unlock["calls"]] == ["Soll ich Front Door wirklich aufschließen?"]
    last = change(hub, "DELETE", kind="entity", target="lock.front_door", name="Pumuckl")
    assert last.status_code == 400 and last.json()["error"] == "last_name"
    assert change(hub, "POST", kind="entity", target="lock.front_door", name="Front Door").status_code == 200
    assert target(names(hub), "entity", "lock.front_door")["removed"] == []  # given back


def test_an_untargeted_entity_is_acted_on_by_nothing(hub: LiveHub) -> None:
    assert plan_calls(hub, "turn on the coffee maker") == [("turn_on", "switch.coffee_maker", "would_run")]
    response = requests.put(f"{hub.url}/api/names/untargeted", headers=AUTH, timeout=30,
                            json={"entity_ids": ["switch.coffee_maker"]})
    assert response.status_code == 200 and response.json() == {"untargeted": ["switch.coffee_maker"]}
    assert target(names(hub), "entity", "switch.coffee_maker")["targeted"] is False
    assert all(entity_id != "switch.coffee_maker" for _, entity_id, _ in plan_calls(hub, "turn on the coffee maker"))
    assert "coffee" not in prompt(hub).lower()
    direct = requests.post(f"{hub.url}/api/tools/turn_on", headers=AUTH, timeout=30,
                           json={"arguments": {"entity_id": "switch.coffee_maker"}}).json()
    assert not direct["ok"] and direct["error"] == "not_allowed"
    entities = requests.get(f"{hub.url}/api/entities", headers=AUTH, timeout=10).json()
    assert "switch.coffee_maker" not in {e["entity_id"] for e in entities}
    requests.put(f"{hub.url}/api/names/untargeted", headers=AUTH, json={"entity_ids": []}, timeout=30)
    assert plan_calls(hub, "turn on the coffee maker") == [("turn_on", "switch.coffee_maker", "would_run")]


@pytest.mark.parametrize("method,path,body,status,code", [
    ("POST", "/api/names", b"", 400, "invalid_body"),
    ("POST", "/api/names", b"{", 400, "invalid_json"),
    ("POST", "/api/names", b'{"kind": "entity", "target": "light.desk_lamp"}', 400, "invalid_body"),
    ("POST", "/api/names", b'{"kind": "room", "target": "Office", "name": "Den"}', 400, "invalid_body"),
    ("POST", "/api/names", b'{"kind": "entity", "target": "light.desk_lamp", "name": "   "}', 400, "invalid_body"),
    ("POST", "/api/names", b'{"kind": "entity", "target": "light.desk_lamp", "name": "\\u0000\\u200b "}', 400,
     "invalid_body"),
    ("POST", "/api/names", b'{"kind": "entity", "target": "light.desk_lamp", "name": "' + b"x" * 101 + b'"}', 400,
     "invalid_body"),
    ("POST", "/api/names", b'{"kind": "entity", "target": "light.nowhere", "name": "Lamp"}', 404, "unknown_entity"),
    ("POST", "/api/names", b'{"kind": "area", "target": "Attic", "name": "Loft"}', 404, "unknown_area"),
    ("POST", "/api/names", b'{"kind": "entity", "target": "light.desk_lamp", "name": "x", "evil": 1}', 400,
     "invalid_body"),
    ("DELETE", "/api/names", b'{"kind": "entity", "target": "light.desk_lamp", "name": "Lamp"}', 404, "not_a_name"),
    ("DELETE", "/api/names", b'{"kind": "area", "target": "Office", "name": "Office"}', 400, "own_name"),
    ("PUT", "/api/names/untargeted", b'{"entity_ids": "light.desk_lamp"}', 400, "invalid_body"),
    ("PUT", "/api/names/untargeted", b'{"entity_ids": ["not an id"]}', 400, "invalid_body"),
    ("PUT", "/api/names/untargeted", b'{"entity_ids": ["light.nowhere"]}', 404, "unknown_entity"),
])
def test_bad_name_bodies_get_a_clear_error_and_change_nothing(hub: LiveHub, method, path, body, status, code):
    before = names(hub)
    response = requests.request(method, hub.url + path, data=body, timeout=30,
                                headers={**AUTH, "Content-Type": "application/json"})
    assert response.status_code == status, response.text
    assert response.json()["error"] == code and response.json()["message"]
    assert names(hub) == before


def test_names_survive_a_restart_and_a_folder_that_cannot_be_written_changes_nothing(
        tmp_path: Path, smollm_path: Path) -> None:
    first = LiveHub(tmp_path, model_path=str(smollm_path)).start()
    try:
        assert change(first, "POST", kind="entity", target="light.desk_lamp", name="Reading lamp").status_code == 200
        assert requests.put(f"{first.url}/api/names/untargeted", headers=AUTH, timeout=30,
                            json={"entity_ids": ["fan.bedroom_fan"]}).status_code == 200
        blocker = tmp_path / "names.json"
        saved = blocker.read_bytes()
        blocker.unlink()
        blocker.mkdir()  # a folder where the file goes: the replace fails, as on a full disk
        refused = change(first, "POST", kind="entity", target="light.desk_lamp", name="Lamp two")
        assert refused.status_code == 507 and refused.json()["error"] == "names_not_saved"
        assert "nothing was changed" in refused.json()["message"]
        assert not any(n["name"] == "Lamp two" for n in target(names(first), "entity", "light.desk_lamp")["names"])
        assert not list(tmp_path.glob("*.tmp"))
        shutil.rmtree(blocker)
        blocker.write_bytes(saved)
    finally:
        first.stop()
    second = LiveHub(tmp_path, model_path=str(smollm_path)).start()
    try:
        listing = names(second)
        assert any(n == {"name": "Reading lamp", "origin": "added", "source": None, "removable": True}
                   for n in target(listing, "entity", "light.desk_lamp")["names"])
        assert listing["untargeted"] == ["fan.bedroom_fan"]
        assert plan_calls(second, "turn on the reading lamp") == [("turn_on", "light.desk_lamp", "would_run")]
        assert plan_calls(second, "turn on the bedroom fan") == []
    finally:
        second.stop()
