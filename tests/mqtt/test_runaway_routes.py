"""Runaway output ends on every route (issue 16): a model caught in a loop ("Le Grand Garou, le
Grand Garou, …", or one sentence over and over) is stopped, and the reply stays within
`max_reply_chars`, through the real Wyoming socket, MQTT on a real mosquitto, REST (JSON and the
streamed form the web page reads) of one running hub. The OpenAI-compatible endpoint hands back
the model's raw text (its caller sets max_tokens): there the loop ends the completion with
finish_reason "length"."""

from __future__ import annotations

import asyncio
import json

import aiohttp
import pytest
from wyoming.client import AsyncTcpClient
from wyoming.event import Event
from wyoming.handle import Handled, NotHandled

from hub.app import HubApp
from hub.config import validate
from helpers.scripted_engine import LOOPS, LoopingEngine
from mqtt.mqtt_helpers import Sniffer, free_port, json_with

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

BASE = "bolt_hub/bolt_hub"
TOKEN = "runaway-token"
MAX_REPLY = 120


@pytest.fixture
async def hub(mosquitto, tmp_path):
    engine = LoopingEngine()
    config = validate({"data_dir": str(tmp_path), "mqtt_host": "127.0.0.1", "mqtt_port": mosquitto.port,
                       "wyoming_port": free_port(), "http_port": free_port(), "zeroconf": False,
                       "api_token": TOKEN, "max_reply_chars": MAX_REPLY, "fast_path": False})
    app = HubApp(config, engine=engine)
    await app.start()
    yield app, engine
    await app.stop()


async def wyoming_reply(app: HubApp, text: str) -> str:
    async with AsyncTcpClient("127.0.0.1", app.options.wyoming.wyoming_port) as client:
        await client.write_event(Event(type="transcript", data={"text": text}))
        while True:
            event = await asyncio.wait_for(client.read_event(), 20)
            assert event is not None
            if Handled.is_type(event.type):
                return Handled.from_event(event).text or ""
            if NotHandled.is_type(event.type):
                return NotHandled.from_event(event).text or ""


async def mqtt_reply(mosquitto, text: str) -> str:
    sniffer = await asyncio.to_thread(Sniffer, mosquitto.port, [f"{BASE}/reply"])
    try:
        await asyncio.to_thread(sniffer.publish, f"{BASE}/ask", {"text": text, "id": "loop"})
        return json.loads(await sniffer.wait_for(f"{BASE}/reply", json_with(id="loop"), timeout=20))["text"]
    finally:
        await asyncio.to_thread(sniffer.close)


async def rest_reply(app: HubApp, text: str, streamed: bool) -> str:
    headers = {"Authorization": f"Bearer {TOKEN}", **({"Accept": "text/event-stream"} if streamed else {})}
    url = f"http://127.0.0.1:{app.options.http.http_port}/api/ask"
    async with aiohttp.ClientSession() as session:
        async with session.post(url, json={"text": text}, headers=headers, timeout=aiohttp.ClientTimeout(20)) as response:
            assert response.status == 200
            if not streamed:
                return (await response.json())["reply"]
            body = await response.text()
    done = [json.loads(line[5:]) for line in body.splitlines() if line.startswith("data:") and '"reply"' in line]
    return done[-1]["reply"]


@pytest.mark.parametrize("loop", sorted(LOOPS))
async def test_a_loop_is_stopped_on_every_route(hub, mosquitto, loop) -> None:
    app, engine = hub
    engine.loop = LOOPS[loop]
    replies = {
        "wyoming": await wyoming_reply(app, "What is the capital of France?"),
        "mqtt": await mqtt_reply(mosquitto, "What is the capital of France?"),
        "rest": await rest_reply(app, "What is the capital of France?", streamed=False),
        "web page (streamed)": await rest_reply(app, "What is the capital of France?", streamed=True),
    }
    for route, reply in replies.items():
        assert reply and len(reply) <= MAX_REPLY, (route, reply)
        assert reply.count("Garou") <= 1 and reply.count("sword") <= 1, (route, reply)
    assert len(engine.read) == 4 and max(engine.read) < 50, f"the hub kept reading the loop: {engine.read}"


@pytest.mark.parametrize("stream", [False, True])
async def test_a_loop_ends_an_openai_completion(hub, stream) -> None:
    app, engine = hub
    url = f"http://127.0.0.1:{app.options.http.http_port}/v1/chat/completions"
    body = {"model": "bolt", "messages": [{"role": "user", "content": "What is the capital of France?"}],
            "stream": stream}
    async with aiohttp.ClientSession() as session:
        async with session.post(url, json=body, headers={"Authorization": f"Bearer {TOKEN}"},
                                timeout=aiohttp.ClientTimeout(20)) as response:
            assert response.status == 200
            if stream:
                chunks = [json.loads(line[5:]) for line in (await response.text()).splitlines()
                          if line.startswith("data:") and line != "data: [DONE]"]
                choices = [c["choices"][0] for c in chunks if c.get("choices")]
                content = "".join(c["delta"].get("content") or "" for c in choices)
                finish = choices[-1]["finish_reason"]
            else:
                choice = (await response.json())["choices"][0]
                content, finish = choice["message"]["content"], choice["finish_reason"]
    assert finish == "length" and content.count("Garou") <= 4, content
    assert max(engine.read) < 50, f"the endpoint kept reading the loop: {engine.read}"
