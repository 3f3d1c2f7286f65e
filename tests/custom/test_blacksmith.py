"""The blacksmith example end to end: the hub (HubApp with examples/blacksmith/blacksmith.yaml) on a
real mosquitto, and the simulated shop (examples/blacksmith/shop.py) answering every tool call
over MQTT. A scripted engine decides the calls (the model's judgement is not under test here);
one test lets the real SmolLM2 drive a turn."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path
from typing import Any, AsyncIterator

import aiohttp
import pytest
import yaml

from hub.agent.types import TurnRequest, TurnResult
from hub.app import HubApp
from hub.config import validate
from hub.interfaces.http.rest_api import RestApi
from hub.llm.llama_engine import LlamaEngine
from hub.llm.types import Delta, GenerationRequest
from hub.locales import phrase
from helpers.scripted_engine import ScriptedEngine, call, text
from mqtt.mqtt_helpers import json_with

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "blacksmith"
BASE = "bolt_hub/bolt_hub"
TOOLS = ["check_payment", "lookup_recipe", "gather_ingredients", "craft_item"]
GREETING = "Welcome to my forge, traveller! Swords, shields, horseshoes: what shall I make you?"


def _load_shop_module() -> Any:
    spec = importlib.util.spec_from_file_location("blacksmith_shop", EXAMPLE / "shop.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


shop_module = _load_shop_module()


@pytest.fixture
async def shop(mosquitto):
    server = await asyncio.to_thread(lambda: shop_module.ShopServer(shop_module.Shop(), "127.0.0.1",
                                                                    mosquitto.port).start())
    yield server
    await asyncio.to_thread(server.stop)


async def start_hub(mosquitto, tmp_path: Path, engine: Any, **options: Any) -> HubApp:
    config = validate({"data_dir": str(tmp_path), "mqtt_host": "127.0.0.1", "mqtt_port": mosquitto.port,
                       "custom_file": str(EXAMPLE / "blacksmith.yaml"), "turn_timeout": 120, **options})
    app = HubApp(config, engine=engine)
    await app.start(listeners=False)
    return app


def tool_messages(request: GenerationRequest) -> list[dict[str, Any]]:
    return [json.loads(m.content) for m in request.messages if m.role == "tool"]


def sees(expected: dict[str, Any], then: list[Delta]):
    """A scripted round that first checks the last tool result the model was shown."""

    def round_(request: GenerationRequest) -> list[Delta]:
        shown = tool_messages(request)[-1]
        assert {k: shown.get(k) for k in expected} == expected, shown
        return then
    return round_


async def ask(app: HubApp, said: str, conversation_id: str, persona: str | None = "blacksmith") -> TurnResult:
    return await app.agent.ask(TurnRequest(said, conversation_id=conversation_id, language="en",
                                           source="mqtt", persona=persona))


async def test_blacksmith_takes_payment_and_forges_a_sword_over_two_turns(mosquitto, tmp_path, shop):
    engine = ScriptedEngine([
        # turn 1: "A sword, please."
        [call("check_payment", item="sword")],
        sees({"ok": True, "paid": True, "price": 50, "gold_left": 70}, [call("lookup_recipe", item="sword")]),
        sees({"ok": True, "ingredients": {"iron ingot": 3, "leather strip": 1}},
             text("Fifty gold, thank you. Three iron ingots and a strip of leather it takes.")),
        # turn 2: "Go on then."
        [call("gather_ingredients", item="sword")],
        sees({"ok": True, "gathered": {"iron ingot": 3, "leather strip": 1}}, [call("craft_item", item="sword")]),
        sees({"ok": True, "item": "sword", "handed_to": "hero-1", "inventory": ["sword"]},
             text("Here is your sword, hero.")),
    ])
    app = await start_hub(mosquitto, tmp_path, engine)
    try:
        first = await ask(app, "A sword, please.", "hero-1")
        assert first.ok and first.reply.startswith("Fifty gold"), first
        assert [(c.call.name, c.ok) for c in first.tool_calls] == [("check_payment", True), ("lookup_recipe", True)]
        state = shop.shop.snapshot()
        assert state["players"]["hero-1"] == {"gold": 70, "inventory": []}
        assert state["paid"] == ["hero-1:sword"] and state["stock"]["iron ingot"] == 6

        second = await ask(app, "Go on then.", "hero-1", persona=None)  # the conversation keeps its persona
        assert second.ok and second.reply == "Here is your sword, hero.", second
        assert [(c.call.name, c.ok) for c in second.tool_calls] == [("gather_ingredients", True), ("craft_item", True)]
        state = shop.shop.snapshot()
        assert state["players"]["hero-1"] == {"gold": 70, "inventory": ["sword"]}
        assert state["stock"] == {"iron ingot": 3, "leather strip": 1, "oak plank": 4}
        assert state["paid"] == [] and state["anvil"] == {"sword": 0}
    finally:
        await app.stop()

    # every step was its own MQTT round trip, in order, each with its own correlation id
    assert [tool for tool, _ in shop.requests] == TOOLS
    ids = [request["id"] for _, request in shop.requests]
    assert len(set(ids)) == 4 and all(ids)
    # the model spoke as the blacksmith, with the blacksmith's tools only
    prompt = engine.requests[0]
    assert "You are Brom, the blacksmith of Emberfall" in prompt.messages[0].content
    assert [t.name for t in prompt.tools] == TOOLS


async def test_a_call_written_without_markers_is_made_not_spoken(mosquitto, tmp_path, shop):
    """Qwen2.5-Coder wrote its calls as bare JSON, and the player heard
    `{"name": "check_payment", …}` three turns running (issue 16): the hub reads it as the call."""
    engine = ScriptedEngine([
        text('{"name": "check_payment", ', '"arguments": {"item": "sword"}}.'),
        sees({"ok": True, "paid": True, "price": 50}, text("Fifty gold, thank you.")),
    ])
    app = await start_hub(mosquitto, tmp_path, engine)
    try:
        result = await ask(app, "A sword, please.", "hero-1")
        assert result.reply == "Fifty gold, thank you.", result
        assert [(c.call.name, c.ok) for c in result.tool_calls] == [("check_payment", True)]
        assert shop.shop.snapshot()["players"]["hero-1"]["gold"] == 70
    finally:
        await app.stop()


async def test_a_direct_mqtt_call_returns_what_the_model_got(mosquitto, tmp_path, shop, sniffer_factory):
    engine = ScriptedEngine([[call("lookup_recipe", item="shield")], text("Planks and iron.")])
    app = await start_hub(mosquitto, tmp_path, engine)
    sniffer = sniffer_factory([f"{BASE}/tool/+/result"])
    try:
        through_model = (await ask(app, "What goes into a shield?", "hero-2")).tool_calls[0]
        await asyncio.to_thread(sniffer.publish, f"{BASE}/tool/lookup_recipe",
                                {"id": "r1", "persona": "blacksmith", "arguments": {"item": "shield"}})
        direct = json.loads(await sniffer.wait_for(f"{BASE}/tool/lookup_recipe/result", json_with(id="r1"),
                                                   timeout=30))
    finally:
        await app.stop()
    assert through_model.ok and direct["ok"]
    # the same answer, but for the correlation id each round trip had
    model_ids = [request["id"] for _, request in shop.requests]
    assert [through_model.data.pop("id"), direct["result"].pop("id")] == model_ids and len(set(model_ids)) == 2
    assert direct["result"] == through_model.data == {"ok": True, "tool": "lookup_recipe", "item": "shield",
                                                      "ingredients": {"oak plank": 2, "iron ingot": 1}}


async def test_one_personas_tools_are_not_callable_from_another(mosquitto, tmp_path, shop, sniffer_factory):
    engine = ScriptedEngine([
        [call("check_payment", item="sword")], text(""),  # the home persona's model reaches for a shop tool
        [call("turn_on", entity_id="light.forge")], text(""),  # the blacksmith's reaches for a home tool
    ])
    app = await start_hub(mosquitto, tmp_path, engine)
    sniffer = sniffer_factory([f"{BASE}/tool/+/result"])
    try:
        home_turn = await ask(app, "Charge me for a sword.", "home-1", persona=None)
        smith_turn = await ask(app, "Light the forge lamp.", "hero-3")
        for payload, tool in (({"id": "d1", "item": "sword"}, "check_payment"),
                              ({"id": "d2", "persona": "blacksmith", "entity_id": "light.forge"}, "turn_on")):
            await asyncio.to_thread(sniffer.publish, f"{BASE}/tool/{tool}", payload)
        refused = [json.loads(await sniffer.wait_for(f"{BASE}/tool/{tool}/result", json_with(id=i), timeout=30))
                   for tool, i in (("check_payment", "d1"), ("turn_on", "d2"))]
    finally:
        await app.stop()
    assert [(c.call.name, c.data["error"]) for c in home_turn.tool_calls] == [("check_payment", "tool_not_allowed")]
    assert [(c.call.name, c.data["error"]) for c in smith_turn.tool_calls] == [("turn_on", "tool_not_allowed")]
    assert [a["error"] for a in refused] == ["tool_not_allowed", "tool_not_allowed"]
    assert shop.requests == []  # nothing reached the shop
    assert {t.name for t in engine.requests[0].tools}.isdisjoint(TOOLS)  # nor was it offered


async def test_arguments_failing_the_schema_never_reach_the_shop(mosquitto, tmp_path, shop, sniffer_factory):
    engine = ScriptedEngine([[call("craft_item", item="crown")], text("")])
    app = await start_hub(mosquitto, tmp_path, engine)
    sniffer = sniffer_factory([f"{BASE}/tool/+/result", "game/shop/request/#"])
    try:
        through_model = await ask(app, "Forge me a crown.", "hero-7")
        await asyncio.to_thread(sniffer.publish, f"{BASE}/tool/check_payment",
                                {"id": "bad", "persona": "blacksmith", "item": "sword", "price": 0})
        direct = json.loads(await sniffer.wait_for(f"{BASE}/tool/check_payment/result", json_with(id="bad"),
                                                   timeout=30))
    finally:
        await app.stop()
    assert through_model.tool_calls[0].data["error"] == "invalid_arguments"
    assert direct["error"] == "invalid_arguments" and "price" in direct["message"], direct
    assert shop.requests == [] and sniffer.on("game/shop/request/#") == []


async def test_a_shop_that_never_answers_ends_in_a_spoken_timeout_and_the_next_turn_works(mosquitto, tmp_path, shop):
    engine = ScriptedEngine([
        [call("check_payment", item="horseshoe")], text(""),  # nothing to add: the tool's words are spoken
        [call("check_payment", item="horseshoe")], text("Eight gold, thank you."),
    ])
    app = await start_hub(mosquitto, tmp_path, engine)
    try:
        await asyncio.to_thread(shop.stop)
        silent = await ask(app, "A horseshoe, please.", "hero-4")
        assert silent.tool_calls[0].data["error"] == "timeout"
        assert silent.reply == phrase("en", "tool.timeout", name="the till"), silent
        assert "hero-4" not in shop.shop.snapshot()["players"]  # the request went nowhere

        reopened = await asyncio.to_thread(lambda: shop_module.ShopServer(shop.shop, "127.0.0.1",
                                                                          mosquitto.port).start())
        try:
            again = await ask(app, "Try again.", "hero-4")
        finally:
            await asyncio.to_thread(reopened.stop)
    finally:
        await app.stop()
    assert again.ok and again.reply == "Eight gold, thank you.", again
    assert again.tool_calls[0].ok and shop.shop.snapshot()["players"]["hero-4"]["gold"] == 112


async def test_the_blacksmith_is_asked_over_mqtt_and_rest(mosquitto, tmp_path, shop, sniffer_factory):
    engine = ScriptedEngine([
        [call("check_payment", item="horseshoe")], text("Eight gold it is."),  # MQTT ask
        [call("lookup_recipe", item="horseshoe")], text("One iron ingot."),  # REST ask, same conversation
    ])
    app = await start_hub(mosquitto, tmp_path, engine, api_token="smith-token")
    rest = RestApi(app, app.options.http, host="127.0.0.1", port=0)
    await rest.start()
    sniffer = sniffer_factory([f"{BASE}/reply"])
    try:
        await asyncio.to_thread(sniffer.publish, f"{BASE}/ask", {"id": "q1", "text": "A horseshoe, please.",
                                                                 "persona": "blacksmith", "conversation_id": "hero-6"})
        over_mqtt = json.loads(await sniffer.wait_for(f"{BASE}/reply", json_with(id="q1"), timeout=30))
        await asyncio.to_thread(sniffer.publish, f"{BASE}/ask", {"id": "q2", "text": "Hello?", "persona": "ghost"})
        unknown = json.loads(await sniffer.wait_for(f"{BASE}/reply", json_with(id="q2"), timeout=30))
        async with aiohttp.ClientSession(headers={"Authorization": "Bearer smith-token"}) as http:
            async with http.post(f"http://127.0.0.1:{rest.port}/api/ask", json={
                    "text": "What does it take?", "persona": "blacksmith", "conversation_id": "hero-6"}) as response:
                over_rest = await response.json()
    finally:
        await rest.stop()
        await app.stop()
    assert over_mqtt["ok"] and over_mqtt["text"] == "Eight gold it is.", over_mqtt
    assert [(c["name"], c["ok"]) for c in over_mqtt["tool_calls"]] == [("check_payment", True)]
    assert unknown["ok"] is False and unknown["error"] == "unknown_persona", unknown
    assert over_rest["ok"] and [c["name"] for c in over_rest["tool_calls"]] == ["lookup_recipe"], over_rest
    assert [tool for tool, _ in shop.requests] == ["check_payment", "lookup_recipe"]
    assert shop.shop.snapshot()["players"]["hero-6"]["gold"] == 112
    assert len(engine.requests) == 4  # the ghost never reached the model


class RecordingEngine:
    """The real engine, with every request kept (to read the persona's prompt)."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.requests: list[GenerationRequest] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)

    async def stream(self, request: GenerationRequest) -> AsyncIterator[Delta]:
        self.requests.append(request)
        async for delta in self.engine.stream(request):
            yield delta


@pytest.mark.timeout(900)
async def test_a_real_model_serves_a_turn_as_the_blacksmith(mosquitto, tmp_path, shop, smollm_path):
    """Mechanism only (SmolLM2 is too small to be a good blacksmith): the turn completes, the prompt
    carries the persona and its tools, and every call the model makes is a real round trip."""
    engine = RecordingEngine(LlamaEngine(smollm_path, n_ctx=4096, seed=7))
    app = await start_hub(mosquitto, tmp_path, engine, n_ctx=4096, max_tokens=48, turn_timeout=400)
    try:
        result = await ask(app, "I want to buy a sword. Check my payment first.", "hero-5")
    finally:
        await app.stop()
    assert result.reply.strip() and (result.ok or result.error), result
    first = engine.requests[0]
    assert first.messages[0].role == "system" and "You are Brom" in first.messages[0].content
    assert [t.name for t in first.tools] == TOOLS
    assert any(m.role == "user" and "sword" in m.content for m in first.messages)
    # each call that passed its schema went to the shop and back; the others never left the hub
    reached = [f.call.name for f in result.tool_calls if f.call.name in TOOLS and f.data.get("error") != "invalid_arguments"]
    assert [tool for tool, _ in shop.requests] == reached, result.tool_calls
    assert all(f.data.get("tool") == f.call.name for f in result.tool_calls if f.call.name in reached)


def test_the_shop_refuses_what_it_cannot_do():
    """The simulator's own rules (the refusals the blacksmith speaks)."""
    shop = shop_module.Shop(gold=10)
    assert shop.handle("check_payment", {"player": "p", "item": "sword"})["ok"] is False
    assert shop.handle("craft_item", {"player": "p", "item": "horseshoe"})["reason"].endswith("not paid for yet.")
    assert shop.handle("check_payment", {"player": "p", "item": "horseshoe"})["gold_left"] == 2
    assert "anvil" in shop.handle("craft_item", {"player": "p", "item": "horseshoe"})["reason"]
    assert shop.handle("lookup_recipe", {"item": "crown"})["ok"] is False
    assert shop.handle("melt_gold", {})["ok"] is False
    shop.stock["leather strip"] = 0
    assert shop.handle("gather_ingredients", {"item": "sword"})["missing"] == {"leather strip": 1}
    assert shop.stock["iron ingot"] == 6  # nothing taken when something is missing


@pytest.mark.timeout(900)
async def test_a_real_model_bound_to_call_a_tool_makes_a_real_round_trip(mosquitto, tmp_path, shop, smollm_path):
    """With `tool_choice: required` a grammar makes even SmolLM2 call one of the persona's tools:
    the call it writes goes to the shop over MQTT and the shop's answer comes back as its result."""
    custom = yaml.safe_load((EXAMPLE / "blacksmith.yaml").read_text())
    custom["personas"]["blacksmith"]["tool_choice"] = "required"
    custom_file = tmp_path / "required.yaml"
    custom_file.write_text(yaml.safe_dump(custom))
    engine = RecordingEngine(LlamaEngine(smollm_path, n_ctx=4096, seed=7))
    app = await start_hub(mosquitto, tmp_path, engine, n_ctx=4096, max_tokens=48, turn_timeout=400,
                          custom_file=str(custom_file))
    try:
        result = await ask(app, "A sword, please. Here is my gold.", "hero-7")
    finally:
        await app.stop()
    assert engine.requests[0].constraint is not None
    assert engine.requests[0].constraint.tool_names == tuple(TOOLS)
    called = [f for f in result.tool_calls if f.call.name in TOOLS]
    assert called, result
    assert [tool for tool, _ in shop.requests] == [f.call.name for f in called]
    assert all(f.data.get("tool") == f.call.name and f.call.arguments["item"] in ("sword", "shield", "horseshoe")
               for f in called), called
    assert result.reply.strip()


async def test_the_blacksmith_greets_a_new_customer_and_remembers_it(mosquitto, tmp_path, shop, sniffer_factory):
    def sees_greeting(request: GenerationRequest) -> list[Delta]:
        assert [(m.role, m.content) for m in request.messages[1:2]] == [("assistant", GREETING)]
        return text("Aye, a sword.")

    engine = ScriptedEngine([sees_greeting])
    app = await start_hub(mosquitto, tmp_path, engine, api_token="smith-token")
    rest = RestApi(app, app.options.http, host="127.0.0.1", port=0)
    await rest.start()
    sniffer = sniffer_factory([f"{BASE}/reply"])
    try:
        await asyncio.to_thread(sniffer.publish, f"{BASE}/greet",
                                {"id": "g1", "persona": "blacksmith", "conversation_id": "hero-8"})
        over_mqtt = json.loads(await sniffer.wait_for(f"{BASE}/reply", json_with(id="g1"), timeout=30))
        await asyncio.to_thread(sniffer.publish, f"{BASE}/greet", {"id": "g2", "persona": "ghost"})
        unknown = json.loads(await sniffer.wait_for(f"{BASE}/reply", json_with(id="g2"), timeout=30))
        await asyncio.to_thread(sniffer.publish, f"{BASE}/greet", b"[1, 2")
        async with aiohttp.ClientSession(headers={"Authorization": "Bearer smith-token"}) as http:
            async with http.post(f"http://127.0.0.1:{rest.port}/api/personas/blacksmith/greet") as response:
                over_rest = await response.json()
            async with http.post(f"http://127.0.0.1:{rest.port}/api/personas/ghost/greet", json={}) as response:
                assert response.status == 404 and (await response.json())["error"] == "unknown_persona"
        # the MQTT greeting opened hero-8: its next turn talks to the blacksmith, who said hello first
        answer = await ask(app, "A sword.", "hero-8", persona=None)
    finally:
        await rest.stop()
        await app.stop()
    assert over_mqtt["type"] == "greeting" and over_mqtt["text"] == GREETING, over_mqtt
    assert over_mqtt["conversation_id"] == "hero-8"
    assert unknown["ok"] is False and unknown["error"] == "unknown_persona"
    assert over_rest["reply"] == GREETING and over_rest["conversation_id"] != "hero-8"
    assert answer.reply == "Aye, a sword." and engine.requests[0].tools[0].name == "check_payment"


async def test_an_ask_on_the_personas_topic_talks_to_it(mosquitto, tmp_path, shop, sniffer_factory):
    engine = ScriptedEngine([text("Aye."), text("Hello.")])
    app = await start_hub(mosquitto, tmp_path, engine)
    sniffer = sniffer_factory([f"{BASE}/reply"])
    try:
        await asyncio.to_thread(sniffer.publish, f"{BASE}/ask/blacksmith", {"id": "t1", "text": "Hello, smith."})
        by_topic = json.loads(await sniffer.wait_for(f"{BASE}/reply", json_with(id="t1"), timeout=30))
        # a persona named in the ask wins over the topic's
        await asyncio.to_thread(sniffer.publish, f"{BASE}/ask/blacksmith",
                                {"id": "t2", "text": "Hello, Bolt.", "persona": "home"})
        named = json.loads(await sniffer.wait_for(f"{BASE}/reply", json_with(id="t2"), timeout=30))
        await asyncio.to_thread(sniffer.publish, f"{BASE}/ask/dragon", {"id": "t3", "text": "Roar?"})
        unknown = json.loads(await sniffer.wait_for(f"{BASE}/reply", json_with(id="t3"), timeout=30))
    finally:
        await app.stop()
    assert by_topic["text"] == "Aye." and [t.name for t in engine.requests[0].tools] == TOOLS
    assert named["text"] == "Hello." and "check_payment" not in [t.name for t in engine.requests[1].tools]
    assert unknown["error"] == "unknown_persona" and len(engine.requests) == 2
