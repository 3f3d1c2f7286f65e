"""mqtt tools against a real mosquitto and a simulated shop answering over MQTT."""

from __future__ import annotations

import json

import pytest

from hub.core.tools import ToolContext, ToolRegistry
from hub.core.messages import ToolCall
from mqtt.mqtt_helpers import eventually

from custom.responder import Responder

SHOP = """
tools:
  check_payment:
    type: mqtt
    description:
      en: Check whether the customer paid.
      de: Prüfen, ob der Kunde bezahlt hat.
    title:
      en: the shop
      de: der Laden
    parameters:
      type: object
      properties:
        customer: {type: string}
        item: {type: string, enum: [sword, shield]}
      required: [customer, item]
      additionalProperties: false
    topic: game/shop/payment/check
    payload: {customer: "{{ args.customer }}", item: "{{ args.item }}", key: "{{ secrets.shop_key }}"}
    response_topic: game/shop/payment/result
    correlation: id
    timeout: 1.5
    success: "{{ response.paid }}"
    result: {paid: "{{ response.paid }}", price: "{{ response.price }}"}
    speech: "{{ 'Paid.' if response.paid else 'Not paid.' }}"
  echo:
    type: mqtt
    description: Echo the key back (a careless peer).
    topic: game/shop/payment/check
    payload: {customer: echo, item: sword, key: "{{ secrets.shop_key }}"}
    response_topic: game/shop/payment/result
    correlation: id
    timeout: 5
  craft_item:
    type: mqtt
    description: Craft an item (slow).
    title: the forge
    parameters: {type: object, properties: {item: {type: string}}, required: [item]}
    topic: game/forge/craft
    payload: {item: "{{ args.item }}", reply_to: "game/forge/done/{{ id }}"}
    response_topic: "game/forge/done/{{ id }}"
    timeout: {craft_timeout}
    ack_after: 0.3
    speech: "Your {{ response.item }} is ready."
"""
SECRET = "k3y-Very-Secret"
CTX = ToolContext(conversation_id="c1", language="en", source="mqtt", persona="blacksmith")


def shop_answer(request: dict) -> list:
    """Ann has paid; Bob's requests go unanswered; 'echo' gets its key back. A decoy with a
    wrong id always comes first, so only correlation picks the right answer."""
    if request["customer"] == "bob":
        return []
    reply = {"id": request["id"], "paid": request["customer"] == "ann", "price": 12}
    if request["customer"] == "echo":
        reply["echo"] = request["key"]
    decoy = {"id": "someone-else", "paid": False, "price": 99}
    return [("game/shop/payment/result", decoy), ("game/shop/payment/result", reply)]


def registry_of(setup) -> ToolRegistry:
    registry = ToolRegistry()
    for tool in setup.tools:
        registry.register(tool)
    return registry


@pytest.fixture
def shop(mosquitto):
    responder = Responder(mosquitto.port, "game/shop/payment/check", shop_answer)
    yield responder
    responder.close()


def shop_setup(make_setup, mqtt_client, craft_timeout: float = 20, language: str = "en"):
    return make_setup(SHOP.replace("{craft_timeout}", str(craft_timeout)), mqtt=mqtt_client,
                      secrets={"shop_key": SECRET}, language=language)


async def test_round_trip_matches_the_call_id(make_setup, mqtt_client, shop):
    registry = registry_of(shop_setup(make_setup, mqtt_client))
    result = await registry.call(ToolCall("check_payment", {"customer": "ann", "item": "sword"}), CTX)
    assert result.ok, result.data
    assert result.data == {"paid": True, "price": 12}  # the decoy (price 99) was skipped
    assert result.speech == "Paid."
    request = shop.requests[-1]
    assert request["customer"] == "ann" and request["key"] == SECRET and len(request["id"]) == 16

    refused = await registry.call(ToolCall("check_payment", {"customer": "carl", "item": "shield"}), CTX)
    assert not refused.ok and refused.data["error"] == "failed" and refused.speech == "Not paid."


async def test_invalid_arguments_are_rejected_before_anything_is_published(
        make_setup, mqtt_client, sniffer_factory):
    sniffer = sniffer_factory(["game/#"])
    registry = registry_of(shop_setup(make_setup, mqtt_client))
    for bad in ({"customer": "ann", "item": "axe"}, {"customer": "ann"}, {"customer": 5, "item": "sword"},
                {"customer": "ann", "item": "sword", "extra": 1}):
        result = await registry.call(ToolCall("check_payment", bad), CTX)
        assert not result.ok and result.data["error"] == "invalid_arguments", bad
    # a valid call afterwards is the first and only request on the wire
    await registry.call(ToolCall("check_payment", {"customer": "bob", "item": "sword"}), CTX)
    first = json.loads(await sniffer.wait_for("game/shop/payment/check"))
    assert first["customer"] == "bob"
    assert len(sniffer.on("game/shop/payment/check")) == 1


async def test_no_answer_ends_in_a_spoken_timeout_and_everything_still_works(make_setup, mqtt_client, shop):
    registry = registry_of(shop_setup(make_setup, mqtt_client))
    result = await registry.call(ToolCall("check_payment", {"customer": "bob", "item": "sword"}), CTX)
    assert not result.ok
    assert result.data["error"] == "timeout"
    assert result.speech == result.data["message"] == "Sorry, the shop did not answer in time."

    german = registry_of(shop_setup(make_setup, mqtt_client, language="de"))
    de_ctx = ToolContext(conversation_id="c2", language="de", source="mqtt")
    result = await german.call(ToolCall("check_payment", {"customer": "bob", "item": "sword"}), de_ctx)
    assert result.speech == "Entschuldigung, der Laden hat nicht rechtzeitig geantwortet."
    assert german.get("check_payment").spec.description == "Prüfen, ob der Kunde bezahlt hat."

    # the broker, the client and the tool carry on
    again = await registry.call(ToolCall("check_payment", {"customer": "ann", "item": "shield"}), CTX)
    assert again.ok and again.data["paid"] is True
    assert mqtt_client.connected


async def test_slow_answer_is_acknowledged_then_reported(make_setup, mqtt_client, mosquitto, reports):
    forge = Responder(mosquitto.port, "game/forge/craft",
                      lambda r: [(r["reply_to"], {"item": r["item"]})], delay=1.5)
    try:
        setup = shop_setup(make_setup, mqtt_client)
        result = await registry_of(setup).call(ToolCall("craft_item", {"item": "sword"}), CTX)
        assert result.ok and result.pending
        assert result.speech == "I've asked the forge. I'll tell you when there is an answer."
        report = (await eventually(lambda: reports, timeout=30))[0]
        assert report.text == "Your sword is ready."
        assert report.conversation_id == "c1" and report.kind == "action"
        assert report.data["ok"] is True and report.data["id"] == result.data["id"]
        await setup.close()
    finally:
        forge.close()


async def test_slow_answer_that_never_comes_is_reported_as_a_timeout(make_setup, mqtt_client, reports):
    setup = shop_setup(make_setup, mqtt_client, craft_timeout=1.5)  # nobody answers the forge here
    result = await registry_of(setup).call(ToolCall("craft_item", {"item": "axe"}), CTX)
    assert result.pending
    report = (await eventually(lambda: reports, timeout=30))[0]
    assert report.text == "Sorry, the forge did not answer in time."
    assert report.data["ok"] is False and report.data["error"] == "timeout"


async def test_secrets_reach_the_peer_but_never_specs_results_or_reports(make_setup, mqtt_client, shop):
    setup = shop_setup(make_setup, mqtt_client)
    specs = json.dumps([t.spec.__dict__ for t in setup.tools])
    assert SECRET not in specs
    result = await registry_of(setup).call(ToolCall("echo", {}), CTX)
    assert shop.requests[-1]["key"] == SECRET  # rendered into the payload
    assert result.ok and result.data["echo"] == "***"
    assert SECRET not in json.dumps(result.data) + str(result.speech)


async def test_broker_down_gives_a_clear_result(make_setup):
    setup = make_setup(SHOP.replace("{craft_timeout}", "20"), mqtt=None, secrets={"shop_key": SECRET})
    result = await registry_of(setup).call(ToolCall("check_payment", {"customer": "ann", "item": "sword"}), CTX)
    assert not result.ok and result.data["error"] == "mqtt_unavailable"
    assert result.speech == "Sorry, I can't reach the shop right now."
