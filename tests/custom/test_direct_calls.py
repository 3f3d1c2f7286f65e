"""Tools called directly, without the model: MQTT `<base>/tool/<name>` (the app's own MQTT stack on
a real mosquitto) and REST `/api/tools`, both through Agent.call_tool (persona scope, validation)."""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace
from typing import Any

import aiohttp
import pytest

from hub.agent.agent import Agent
from hub.agent.personas import Persona, PersonaBook, home_persona
from hub.config import validate
from hub.options import hub_options
from hub.home.entities import EntityStore
from hub.core.tools import ToolContext, ToolRegistry, ToolResult, ToolTraits
from hub.transport.mqtt_client import BrokerSettings
from hub.mqtt_stack import MqttStack
from hub.interfaces.http.rest_api import RestApi
from hub.core.messages import ToolSpec
from hub.settings import RuntimeSettings
from helpers.scripted_engine import ScriptedEngine
from mqtt.mqtt_helpers import json_with

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

BASE = "bolt_hub/bolt_hub"
TOKEN = "direct-calls-token"


class Bell(ToolTraits):
    """A tool that records every call it ran (so a refused call provably ran nothing)."""

    def __init__(self, name: str) -> None:
        self.spec = ToolSpec(name, f"Ring the {name} bell", {
            "type": "object", "properties": {"times": {"type": "integer", "minimum": 1, "maximum": 5}},
            "required": ["times"], "additionalProperties": False})
        self.calls: list[tuple[dict[str, Any], ToolContext]] = []

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        self.calls.append((args, ctx))
        return ToolResult(ok=True, data={"rang": args["times"], "persona": ctx.persona},
                          speech=f"Rang {args['times']} times.")


@pytest.fixture
async def hub(mosquitto, tmp_path):
    """An agent with two personas (smithy: forge_bell; tavern: tavern_bell), served over MQTT and REST."""
    config = validate({"data_dir": str(tmp_path), "fast_path": False, "api_token": TOKEN, "language": "en"})
    bells = {name: Bell(name) for name in ("forge_bell", "tavern_bell")}
    registry = ToolRegistry()
    for bell in bells.values():
        registry.register(bell)
    personas = PersonaBook(home_persona("You are a home assistant."), [
        Persona("smithy", "Brom", "You are Brom.", tools=("forge_bell",), greeting="Welcome!"),
        Persona("tavern", "Ada", "You are Ada.", tools=("tavern_bell",)),
    ])
    engine = ScriptedEngine([])
    settings = RuntimeSettings(hub_options(config).settings, tmp_path / "settings.json")
    agent = Agent(engine=engine, registry=registry, settings=settings, options=hub_options(config).agent,
                  personas=personas)
    stack = MqttStack(hub_options(config).mqtt, store=EntityStore(), settings=settings, agent=agent,
                      broker=BrokerSettings("127.0.0.1", mosquitto.port), demo_home=False)
    await stack.start()
    rest = RestApi(SimpleNamespace(settings=settings, store=EntityStore(), registry=registry, agent=agent, engine=engine),
                   hub_options(config).http, host="127.0.0.1", port=0)
    await rest.start()
    yield SimpleNamespace(bells=bells, stack=stack, rest=rest, url=f"http://127.0.0.1:{rest.port}")
    await rest.stop()
    await stack.stop()


async def mqtt_call(sniffer, tool: str, payload: Any, call_id: Any, raw: bool = False) -> dict[str, Any]:
    body = payload if raw else json.dumps(payload)
    await asyncio.to_thread(sniffer.publish, f"{BASE}/tool/{tool}", body)
    answer = await sniffer.wait_for(f"{BASE}/tool/{tool}/result", json_with(id=call_id), timeout=20)
    return json.loads(answer)


async def test_mqtt_call_runs_the_tool_as_the_persona_and_answers_with_the_id(hub, sniffer_factory):
    sniffer = sniffer_factory([f"{BASE}/tool/+/result"])
    answer = await mqtt_call(sniffer, "forge_bell", {"id": "c1", "persona": "smithy", "arguments": {"times": 2},
                                                     "conversation_id": "game-7", "language": "de"}, "c1")
    assert answer == {"id": "c1", "tool": "forge_bell", "ok": True, "result": {"rang": 2, "persona": "smithy"},
                      "speech": "Rang 2 times.", "pending": False, "changed_entities": []}
    (args, ctx), = hub.bells["forge_bell"].calls
    assert args == {"times": 2}
    assert (ctx.source, ctx.persona, ctx.conversation_id, ctx.language) == ("mqtt", "smithy", "game-7", "de")


async def test_mqtt_call_without_arguments_key_takes_the_other_fields_as_arguments(hub, sniffer_factory):
    sniffer = sniffer_factory([f"{BASE}/tool/+/result"])
    answer = await mqtt_call(sniffer, "tavern_bell", {"id": 9, "persona": "tavern", "times": 3}, 9)
    assert answer["ok"] and answer["result"] == {"rang": 3, "persona": "tavern"}
    assert [args for args, _ in hub.bells["tavern_bell"].calls] == [{"times": 3}]


@pytest.mark.parametrize("tool,payload,call_id,error", [
    ("forge_bell", b'{"id": "j1", "times": 2', "j1", "bad_request"),  # cut JSON: the id is still read
    ("forge_bell", b"[1, 2]", None, "bad_request"),
    ("forge_bell", b'{"id": "a1", "arguments": [2]}', "a1", "bad_request"),
    ("forge_bell", b'{"id": "p1", "persona": "nobody", "times": 2}', "p1", "unknown_persona"),
    ("no_such_tool", b'{"id": "u1", "persona": "smithy"}', "u1", "unknown_tool"),
    ("tavern_bell", b'{"id": "x1", "persona": "smithy", "times": 2}', "x1", "tool_not_allowed"),
    ("forge_bell", b'{"id": "s1", "persona": "smithy", "times": 9}', "s1", "invalid_arguments"),
    ("forge_bell", b'{"id": "s2", "persona": "smithy", "arguments": {"times": 1, "evil": 1}}', "s2",
     "invalid_arguments"),
])
async def test_bad_mqtt_calls_get_a_clear_error_and_run_nothing(hub, sniffer_factory, tool, payload, call_id, error):
    sniffer = sniffer_factory([f"{BASE}/tool/+/result"])
    answer = await mqtt_call(sniffer, tool, payload, call_id, raw=True)
    assert answer["ok"] is False and answer["error"] == error, answer
    assert answer["tool"] == tool and answer["message"]
    assert not any(bell.calls for bell in hub.bells.values())


async def test_home_persona_cannot_reach_a_persona_tool(hub, sniffer_factory):
    """No persona named: the default (home) persona, which lists neither bell."""
    sniffer = sniffer_factory([f"{BASE}/tool/+/result"])
    answer = await mqtt_call(sniffer, "forge_bell", {"id": "h1", "times": 1}, "h1")
    assert answer["error"] == "tool_not_allowed"
    assert not hub.bells["forge_bell"].calls


async def test_rest_lists_and_runs_the_personas_tools(hub, sniffer_factory):
    auth = {"Authorization": f"Bearer {TOKEN}"}
    async with aiohttp.ClientSession(headers=auth) as http:
        async with http.get(f"{hub.url}/api/personas") as response:
            personas = {p["key"]: p for p in await response.json()}
        assert personas["smithy"] == {"key": "smithy", "name": "Brom", "language": None, "greeting": "Welcome!",
                                      "tools": ["forge_bell"], "default": False}
        assert personas["home"]["default"] is True
        async with http.get(f"{hub.url}/api/tools", params={"persona": "smithy"}) as response:
            tools = await response.json()
        assert [t["name"] for t in tools] == ["forge_bell"]
        assert tools[0]["parameters"]["required"] == ["times"]
        async with http.get(f"{hub.url}/api/tools", params={"persona": "nobody"}) as response:
            assert response.status == 404 and (await response.json())["error"] == "unknown_persona"

        async with http.post(f"{hub.url}/api/tools/forge_bell",
                             json={"arguments": {"times": 2}, "persona": "smithy"}) as response:
            assert response.status == 200
            over_rest = await response.json()
        for body, status, error in (
            ({"arguments": {"times": 2}, "persona": "tavern"}, 403, "tool_not_allowed"),
            ({"arguments": {"times": 2}}, 403, "tool_not_allowed"),  # the home persona
            ({"arguments": {"times": 2}, "persona": "nobody"}, 404, "unknown_persona"),
            ({"arguments": {"times": 0}, "persona": "smithy"}, 400, "invalid_arguments"),
        ):
            async with http.post(f"{hub.url}/api/tools/forge_bell", json=body) as response:
                assert (response.status, (await response.json())["error"]) == (status, error), body
    assert len(hub.bells["forge_bell"].calls) == 1

    sniffer = sniffer_factory([f"{BASE}/tool/+/result"])
    over_mqtt = await mqtt_call(sniffer, "forge_bell", {"id": None, "persona": "smithy", "times": 2}, None)
    assert over_rest == over_mqtt
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{hub.url}/api/personas") as response:
            assert response.status == 401


async def test_direct_calls_reach_the_tool_called_feed_like_the_models_calls(hub, sniffer_factory):
    """Automations on the hub's "tool called" trigger see every call, with or without the model."""
    sniffer = sniffer_factory([f"{BASE}/tool/+/result", f"{BASE}/tool_called"])
    await mqtt_call(sniffer, "forge_bell", {"id": "f1", "persona": "smithy", "arguments": {"times": 3}}, "f1")
    fed = json.loads(await sniffer.wait_for(f"{BASE}/tool_called", json_with(name="forge_bell"), timeout=20))
    assert (fed["event_type"], fed["source"], fed["ok"], fed["arguments"]) == ("tool_called", "mqtt", True, {"times": 3})
    await mqtt_call(sniffer, "forge_bell", {"id": "f2", "arguments": {"times": 3}}, "f2")  # the home persona: refused
    refused = json.loads(await sniffer.wait_for(f"{BASE}/tool_called", json_with(name="forge_bell", ok=False),
                                                timeout=20))
    assert refused["data"]["error"] == "tool_not_allowed"
