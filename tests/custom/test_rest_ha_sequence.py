"""rest tools against a small aiohttp server, ha_service/ha_script under the action policy,
sequences that stop at the first failure, and render-time sandbox refusals."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from typing import Any

import pytest
from aiohttp import web

from hub.home.entities import Entity, EntityStore
from hub.home.policy import ActionPolicy
from hub.core.tools import ToolContext, ToolRegistry
from hub.core.messages import ToolCall

SECRET = "s3cr3t-Token"
CTX = ToolContext(conversation_id="c1", language="en", source="rest", persona="smith")


class GameServer:
    """The game's HTTP API: recipes (needs the key), crafting, a broken and a slow route."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        app = web.Application()
        app.router.add_get("/recipes/{item}", self.recipe)
        app.router.add_post("/craft", self.craft)
        app.router.add_post("/deliver", self.deliver)
        app.router.add_get("/broken", self.broken)
        app.router.add_get("/slow", self.slow)
        self.runner = web.AppRunner(app)
        self.url = ""

    async def start(self) -> "GameServer":
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"
        return self

    async def recipe(self, request: web.Request) -> web.Response:
        self.hits.append(f"recipe {request.match_info['item']}")
        if request.headers.get("X-Key") != SECRET:
            return web.json_response({"error": "bad key"}, status=401)
        return web.json_response({"data": {"recipe": {"ingredients": ["iron", "coal"], "price": 12},
                                           "key_seen": request.headers["X-Key"]}})

    async def craft(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.hits.append(f"craft {body['item']}")
        if body["item"] == "dragon":
            return web.json_response({"error": "no dragon scales"}, status=500)
        return web.json_response({"crafted": body["item"], "price": body["price"]})

    async def deliver(self, request: web.Request) -> web.Response:
        self.hits.append("deliver")
        return web.Response(text="delivered")

    async def broken(self, request: web.Request) -> web.Response:
        self.hits.append("broken")
        return web.Response(status=503, text="down")

    async def slow(self, request: web.Request) -> web.Response:
        self.hits.append("slow")
        await asyncio.sleep(3)  # far beyond the tool's 0.5 s timeout
        return web.Response(text="late")


@pytest.fixture
async def game():
    server = await GameServer().start()
    yield server
    await server.runner.cleanup()


def tools_yaml(url: str) -> str:
    return f"""
tools:
  lookup_recipe:
    type: rest
    description: Look up a recipe.
    title: the recipe book
    parameters: {{type: object, properties: {{item: {{type: string}}}}, required: [item]}}
    url: "{url}/recipes/{{{{ args.item | urlencode }}}}"
    headers: {{X-Key: "{{{{ secrets.game_key }}}}"}}
    result_path: /data/recipe
    speech: "You need {{{{ response.ingredients | join(' and ') }}}}."
  lookup_raw:
    type: rest
    description: The whole recipe answer.
    url: "{url}/recipes/sword"
    headers: {{X-Key: "{{{{ secrets.game_key }}}}"}}
  craft:
    type: rest
    description: Craft.
    parameters: {{type: object, properties: {{item: {{type: string}}, price: {{type: integer}}}}, required: [item, price]}}
    method: post
    url: "{url}/craft"
    body: {{item: "{{{{ args.item }}}}", price: "{{{{ args.price }}}}"}}
  deliver:
    type: rest
    description: Hand it over.
    method: POST
    url: "{url}/deliver"
    body: "to {{{{ args.customer | default('someone') }}}}"
  broken:
    type: rest
    description: Always down.
    url: "{url}/broken"
  slow:
    type: rest
    description: Never in time.
    url: "{url}/slow"
    timeout: 0.5
  sneaky:
    type: rest
    description: Builds a private name at run time.
    url: "{url}/recipes/{{% set k = '__cla' ~ 'ss__' %}}{{{{ args[k] }}}}"
  forge_order:
    type: sequence
    description: Look up, craft, deliver.
    parameters: {{type: object, properties: {{item: {{type: string}}}}, required: [item]}}
    steps:
      - tool: lookup_recipe
        args: {{item: "{{{{ args.item }}}}"}}
      - tool: craft
        args: {{item: "{{{{ args.item }}}}", price: "{{{{ steps.lookup_recipe.data.price }}}}"}}
      - tool: deliver
    speech: "Here is your {{{{ steps.craft.data.crafted }}}} for {{{{ steps.craft.data.price }}}} gold."
"""


def registry_of(setup) -> ToolRegistry:
    registry = ToolRegistry()
    for tool in setup.tools:
        registry.register(tool)
    return registry


async def test_rest_tool_result_path_speech_and_masked_secret(make_setup, game):
    registry = registry_of(make_setup(tools_yaml(game.url), secrets={"game_key": SECRET}))
    result = await registry.call(ToolCall("lookup_recipe", {"item": "sword"}), CTX)
    assert result.ok, result.data
    assert result.data == {"ingredients": ["iron", "coal"], "price": 12}
    assert result.speech == "You need iron and coal."
    raw = await registry.call(ToolCall("lookup_raw", {}), CTX)
    assert raw.ok and raw.data["data"]["key_seen"] == "***"  # the server got it; the result hides it
    assert SECRET not in json.dumps(raw.data)
    crafted = await registry.call(ToolCall("craft", {"item": "shield", "price": 7}), CTX)
    assert crafted.data == {"crafted": "shield", "price": 7}  # a lone {{ }} kept the number a number
    delivered = await registry.call(ToolCall("deliver", {}), CTX)
    assert delivered.ok and delivered.data == {"result": "delivered"}


async def test_rest_failures_are_clear_results(make_setup, game):
    registry = registry_of(make_setup(tools_yaml(game.url), secrets={"game_key": SECRET}))
    broken = await registry.call(ToolCall("broken", {}), CTX)
    assert not broken.ok and broken.data["error"] == "http_error" and broken.data["status"] == 503
    assert broken.speech == "Sorry, broken didn't work."
    slow = await registry.call(ToolCall("slow", {}), CTX)
    assert slow.data["error"] == "timeout" and slow.speech == "Sorry, slow did not answer in time."
    wrong_key = registry_of(make_setup(tools_yaml(game.url), secrets={"game_key": "wrong"}))
    refused = await wrong_key.call(ToolCall("lookup_recipe", {"item": "sword"}), CTX)
    assert refused.data["error"] == "http_error" and refused.data["status"] == 401
    nowhere = registry_of(make_setup(tools_yaml("http://127.0.0.1:9"), secrets={"game_key": SECRET}))
    unreachable = await nowhere.call(ToolCall("broken", {}), CTX)
    assert unreachable.data["error"] == "unreachable"
    assert unreachable.speech == "Sorry, I can't reach broken right now."


async def test_render_time_sandbox_violation_is_a_clear_result_and_sends_nothing(make_setup, game):
    registry = registry_of(make_setup(tools_yaml(game.url), secrets={"game_key": SECRET}))
    result = await registry.call(ToolCall("sneaky", {}), CTX)
    assert not result.ok and result.data["error"] == "template_error"
    assert "tools.sneaky.url" in result.data["detail"] and "unsafe" in result.data["detail"]
    assert game.hits == []


async def test_sequence_runs_in_order_with_earlier_results(make_setup, game):
    registry = registry_of(make_setup(tools_yaml(game.url), secrets={"game_key": SECRET}))
    result = await registry.call(ToolCall("forge_order", {"item": "sword"}), CTX)
    assert result.ok, result.data
    assert game.hits == ["recipe sword", "craft sword", "deliver"]
    assert result.speech == "Here is your sword for 12 gold."
    assert list(result.data["steps"]) == ["lookup_recipe", "craft", "deliver"]


async def test_sequence_stops_at_the_first_failure(make_setup, game):
    registry = registry_of(make_setup(tools_yaml(game.url), secrets={"game_key": SECRET}))
    result = await registry.call(ToolCall("forge_order", {"item": "dragon"}), CTX)
    assert not result.ok
    assert result.data["error"] == "step_failed" and result.data["step"] == "craft"
    assert result.speech == "Sorry, craft didn't work."
    assert game.hits == ["recipe dragon", "craft dragon"]  # deliver never ran
    assert list(result.data["steps"]) == ["lookup_recipe", "craft"]


class RecordingHA:
    """Stands in for HomeAssistantClient.call_service (its real client has its own tests)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, dict[str, Any]]] = []

    async def call_service(self, domain: str, service: str, data: dict[str, Any]) -> list[dict[str, Any]]:
        self.calls.append((domain, service, data))
        return [{"entity_id": data.get("entity_id", f"{domain}.x"), "state": "on"}]


HA_TOOLS = """
tools:
  forge_light:
    type: ha_service
    description: Light the forge.
    parameters: {type: object, properties: {level: {type: integer}}, required: [level]}
    service: light.turn_on
    data: {entity_id: light.forge, brightness_pct: "{{ args.level }}", token: "{{ secrets.t }}"}
  open_gate:
    type: ha_service
    description: Open the town gate.
    service: lock.unlock
    data: {entity_id: lock.town_gate}
  stove:
    type: ha_service
    description: Stove on.
    service: switch.turn_on
    data: {target: {entity_id: [switch.stove]}}
  wave:
    type: ha_script
    description: Robot waves.
    script: robot_wave
    variables: {speed: "{{ args.speed | default(2) }}"}
"""


def the_forge() -> EntityStore:
    """The hub's own entities the HA tools act on (a user's names laid over the gate's)."""
    store = EntityStore()
    for entity in (Entity("light.forge", "Forge", source="ha"), Entity("lock.town_gate", "Town Gate", source="ha"),
                   Entity("switch.stove", "Stove", source="ha"), Entity("script.robot_wave", "Robot wave", source="ha"),
                   Entity("switch.bellows", "Bellows", source="ha"),
                   Entity("cover.barn", "Barn door", device_class="garage", source="ha")):
        store.upsert(entity)
    return store


class Untargeted:
    """A NameOverlay that untargets `switch.bellows` and calls the gate "Kitchen light"."""

    def entity(self, entity: Entity) -> Entity | None:
        if entity.entity_id == "switch.bellows":
            return None
        return replace(entity, name="Kitchen light") if entity.entity_id == "lock.town_gate" else entity

    def area_aliases(self, aliases):
        return dict(aliases)

    def floors(self, floors):
        return dict(floors)


async def test_ha_service_calls_pass_the_policy(make_setup, caplog):
    ha = RecordingHA()
    policy = ActionPolicy(allowed_domains="light,script,switch", read_only_entities="switch.stove")
    registry = registry_of(make_setup(HA_TOOLS, ha=ha, policy=policy, secrets={"t": SECRET}, entities=the_forge()))

    refused = await registry.call(ToolCall("open_gate", {}), CTX)
    assert not refused.ok and refused.data["error"] == "not_allowed"
    assert refused.speech == "Sorry, I'm not allowed to control Town Gate."
    read_only = await registry.call(ToolCall("stove", {}), CTX)
    assert read_only.data["error"] == "not_allowed"
    assert ha.calls == []  # nothing reached Home Assistant

    with caplog.at_level("INFO", logger="hub.actions"):
        lit = await registry.call(ToolCall("forge_light", {"level": 80}), CTX)
    assert lit.ok and lit.data == {"changed": ["light.forge"]}
    assert ha.calls == [("light", "turn_on", {"entity_id": "light.forge", "brightness_pct": 80, "token": SECRET})]
    assert "light.forge" in caplog.text and SECRET not in caplog.text  # the action log masks secrets

    waved = await registry.call(ToolCall("wave", {}), CTX)
    assert waved.ok
    assert ha.calls[-1] == ("script", "turn_on", {"entity_id": "script.robot_wave", "variables": {"speed": 2}})


async def test_sensitive_ha_service_asks_for_confirmation_first(make_setup):
    ha = RecordingHA()
    policy = ActionPolicy(allowed_domains="lock")
    store = the_forge()
    store.set_overlay(Untargeted())
    registry = registry_of(make_setup(HA_TOOLS, ha=ha, policy=policy, secrets={"t": SECRET}, entities=store))
    held = await registry.call(ToolCall("open_gate", {}), CTX)
    assert held.data["error"] == "confirmation_required"
    assert held.speech == "Do you really want me to unlock Town Gate?"  # its own name, not the one added
    assert ha.calls == []
    held = policy.take_pending("c1")
    assert held is not None and [a.call for a in held.actions] == [ToolCall("open_gate", {})]
    with policy.granted(held, held.actions[0]):
        done = await registry.call(held.actions[0].call, CTX)
    assert done.ok and ha.calls == [("lock", "unlock", {"entity_id": "lock.town_gate"})]


ARGUED_TOOLS = """
tools:
  open_cover:
    type: ha_service
    description: Open a cover.
    parameters: {type: object, properties: {entity_id: {type: string}}, required: [entity_id]}
    service: cover.open_cover
    data: {entity_id: "{{ args.entity_id }}"}
  switch_on:
    type: ha_service
    description: Switch something on.
    parameters: {type: object, properties: {entity_id: {type: string}}, required: [entity_id]}
    service: switch.turn_on
    data: {entity_id: "{{ args.entity_id }}"}
  covers_in:
    type: ha_service
    description: Open the covers of an area.
    parameters: {type: object, properties: {area: {type: string}}, required: [area]}
    service: cover.open_cover
    data: {target: {area_id: "{{ args.area }}"}}
"""


@pytest.mark.parametrize("tool,entity_id,error", [
    ("open_cover", "cover.barn", "confirmation_required"),  # a garage door, by its own device class
    ("switch_on", "switch.bellows", "not_allowed"),  # untargeted by the user
    ("switch_on", "switch.not_the_hubs", "unknown_entity"),  # not one of the hub's entities
    ("switch_on", "all", "unknown_entity"),
    ("covers_in", None, "not_allowed"),  # an area: entities the policy cannot see
])
async def test_an_entity_from_the_arguments_is_one_of_the_hubs_under_its_policy(make_setup, tool, entity_id, error):
    ha = RecordingHA()
    store = the_forge()
    store.set_overlay(Untargeted())
    registry = registry_of(make_setup(ARGUED_TOOLS, ha=ha, policy=ActionPolicy(), entities=store))
    arguments = {"entity_id": entity_id} if entity_id else {"area": "barn"}
    result = await registry.call(ToolCall(tool, arguments), CTX)
    assert not result.ok and result.data["error"] == error, result.data
    assert ha.calls == []
    assert "cover.barn" not in (result.speech or "") and "switch." not in (result.speech or "")


async def test_without_home_assistant_the_call_is_a_clear_result(make_setup):
    registry = registry_of(make_setup(HA_TOOLS, ha=None, secrets={"t": SECRET}))
    result = await registry.call(ToolCall("forge_light", {"level": 10}), CTX)
    assert result.data["error"] == "ha_unavailable"
    assert result.speech == "Sorry, I can't reach Home Assistant right now."
