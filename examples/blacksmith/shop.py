"""A tiny simulated game shop that answers the blacksmith's tools over MQTT.

    python examples/blacksmith/shop.py --broker 127.0.0.1 --port 1883

It stands in for a game server: the hub's blacksmith persona calls its four tools
(examples/blacksmith/blacksmith.yaml), each one a request on `game/shop/request/<tool>` carrying
a correlation id, and the shop answers on `game/shop/response` with the same id:

  check_payment       {"id", "player", "item"}  → takes the price from the player's gold
  lookup_recipe       {"id", "item"}            → the ingredients the item needs
  gather_ingredients  {"id", "item"}            → moves them from the storeroom to the anvil
  craft_item          {"id", "player", "item"}  → forges the item and hands it to the player

Every answer is {"id", "tool", "ok", ...}; a refusal has ok=false and a "reason" the blacksmith
can say. A player the shop has not seen yet starts with `--gold` gold. The shop's state (gold,
stock, inventory) is published retained on `game/shop/state` after every change. Standalone:
only paho-mqtt, no part of the hub.
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import threading
from copy import deepcopy
from typing import Any, Callable

import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion

PREFIX = "game/shop"
_LOGGER = logging.getLogger("shop")

RECIPES: dict[str, dict[str, Any]] = {
    "sword": {"price": 50, "ingredients": {"iron ingot": 3, "leather strip": 1}},
    "horseshoe": {"price": 8, "ingredients": {"iron ingot": 1}},
    "shield": {"price": 35, "ingredients": {"oak plank": 2, "iron ingot": 1}},
}
STOCK = {"iron ingot": 6, "leather strip": 2, "oak plank": 4}


class Shop:
    """The shop's state and rules, apart from MQTT (so a test can read and change it)."""

    def __init__(self, gold: int = 120) -> None:
        self.recipes = deepcopy(RECIPES)
        self.stock = dict(STOCK)
        self.starting_gold = gold
        self.players: dict[str, dict[str, Any]] = {}  # player → {"gold", "inventory"}
        self.paid: dict[tuple[str, str], int] = {}  # (player, item) → orders paid, not yet crafted
        self.anvil: dict[str, int] = {}  # items whose ingredients lie ready
        self.lock = threading.Lock()

    def handle(self, tool: str, request: dict[str, Any]) -> dict[str, Any]:
        handlers: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            "check_payment": self.check_payment, "lookup_recipe": self.lookup_recipe,
            "gather_ingredients": self.gather_ingredients, "craft_item": self.craft_item,
        }
        handler = handlers.get(tool)
        if handler is None:
            return {"ok": False, "reason": f"The shop has no {tool!r} counter."}
        with self.lock:
            return handler(request)

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            return {"stock": dict(self.stock), "players": deepcopy(self.players), "anvil": dict(self.anvil),
                    "paid": [f"{p}:{i}" for (p, i), n in self.paid.items() for _ in range(n)]}

    def player(self, name: str) -> dict[str, Any]:
        return self.players.setdefault(name, {"gold": self.starting_gold, "inventory": []})

    def _item(self, request: dict[str, Any]) -> str | None:
        item = str(request.get("item", "")).strip().lower()
        return item if item in self.recipes else None

    def check_payment(self, request: dict[str, Any]) -> dict[str, Any]:
        item, who = self._item(request), str(request.get("player", "player"))
        if item is None:
            return {"ok": False, "reason": f"I don't forge {request.get('item')!r}."}
        player = self.player(who)
        price = self.recipes[item]["price"]
        if player["gold"] < price:
            return {"ok": False, "paid": False, "price": price, "gold": player["gold"],
                    "reason": f"A {item} costs {price} gold; you have {player['gold']}."}
        player["gold"] -= price
        key = (who, item)
        self.paid[key] = self.paid.get(key, 0) + 1
        return {"ok": True, "paid": True, "item": item, "price": price, "gold_left": player["gold"]}

    def lookup_recipe(self, request: dict[str, Any]) -> dict[str, Any]:
        item = self._item(request)
        if item is None:
            return {"ok": False, "reason": f"There is no recipe for {request.get('item')!r}."}
        return {"ok": True, "item": item, "ingredients": dict(self.recipes[item]["ingredients"])}

    def gather_ingredients(self, request: dict[str, Any]) -> dict[str, Any]:
        item = self._item(request)
        if item is None:
            return {"ok": False, "reason": f"There is no recipe for {request.get('item')!r}."}
        needed = self.recipes[item]["ingredients"]
        missing = {name: n - self.stock.get(name, 0) for name, n in needed.items() if self.stock.get(name, 0) < n}
        if missing:
            return {"ok": False, "missing": missing, "reason": "The storeroom is short of " + ", ".join(missing) + "."}
        for name, n in needed.items():
            self.stock[name] -= n
        self.anvil[item] = self.anvil.get(item, 0) + 1
        return {"ok": True, "item": item, "gathered": dict(needed)}

    def craft_item(self, request: dict[str, Any]) -> dict[str, Any]:
        item, who = self._item(request), str(request.get("player", "player"))
        if item is None:
            return {"ok": False, "reason": f"I don't forge {request.get('item')!r}."}
        if not self.paid.get((who, item)):
            return {"ok": False, "reason": f"The {item} is not paid for yet."}
        if not self.anvil.get(item):
            return {"ok": False, "reason": f"The ingredients for the {item} are not on the anvil yet."}
        self.paid[(who, item)] -= 1
        self.anvil[item] -= 1
        inventory = self.player(who)["inventory"]
        inventory.append(item)
        return {"ok": True, "item": item, "handed_to": who, "inventory": list(inventory)}


class ShopServer:
    """The shop on an MQTT broker: requests in, answers (with their correlation id) out."""

    def __init__(self, shop: Shop, host: str = "127.0.0.1", port: int = 1883, prefix: str = PREFIX) -> None:
        self.shop = shop
        self.host, self.port, self.prefix = host, port, prefix
        self.requests: list[tuple[str, dict[str, Any]]] = []  # what arrived, in order
        self._ready = threading.Event()
        self.client = paho.Client(CallbackAPIVersion.VERSION2, client_id=f"game-shop-{id(self):x}")
        self.client.on_connect = self._on_connect
        self.client.on_subscribe = lambda *args: self._ready.set()
        self.client.message_callback_add(f"{prefix}/request/+", self._on_request)

    def start(self, timeout: float = 10.0) -> "ShopServer":
        self.client.connect(self.host, self.port, keepalive=30)
        self.client.loop_start()
        if not self._ready.wait(timeout):
            self.stop()
            raise TimeoutError(f"the shop could not subscribe on {self.host}:{self.port}")
        self._publish_state()
        return self

    def stop(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()

    def _on_connect(self, client: paho.Client, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        client.subscribe(f"{self.prefix}/request/+", qos=1)

    def _on_request(self, client: paho.Client, userdata: Any, message: paho.MQTTMessage) -> None:
        tool = message.topic.rsplit("/", 1)[-1]
        try:
            request = json.loads(message.payload)
            if not isinstance(request, dict):
                raise ValueError("not an object")
        except ValueError as err:
            _LOGGER.warning("unreadable request on %s: %s", message.topic, err)
            return
        self.requests.append((tool, request))
        answer = {"id": request.get("id"), "tool": tool, **self.shop.handle(tool, request)}
        _LOGGER.info("%s %s → %s", tool, request, answer)
        client.publish(f"{self.prefix}/response", json.dumps(answer), qos=1)
        self._publish_state()

    def _publish_state(self) -> None:
        self.client.publish(f"{self.prefix}/state", json.dumps(self.shop.snapshot()), qos=1, retain=True)


def main() -> None:
    parser = argparse.ArgumentParser(description="A simulated game shop for the blacksmith example.")
    parser.add_argument("--broker", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=1883)
    parser.add_argument("--gold", type=int, default=120, help="the player's gold at the start")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    server = ShopServer(Shop(args.gold), args.broker, args.port).start()
    _LOGGER.info("the shop is open on %s:%s (%s/request/<tool>)", args.broker, args.port, PREFIX)
    stopped = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stopped.set())
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    stopped.wait()
    server.stop()


if __name__ == "__main__":
    main()
