"""20 REST and 20 MQTT model asks at once against a served hub: each is answered or told "busy"
(in its own language), none times out. The model's queue admits only what it can do within
turn_timeout (hub.llm.admission) and refuses the rest at once (within a second), and it admits
the two interfaces alike (issue 42 I4: the MQTT asks, reaching the hub a moment after the REST
ones, were all but shut out)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import aiohttp
import pytest

from hub.locales import phrase
from reliability.served_hub import MODEL_TEXTS_IN, MqttAsker, ServedHub

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]

TOKEN = "admission-token"
TURN_TIMEOUT = 30  # the default
ASKS = 20  # per interface
WARM_TURNS = 5


async def rest_ask(session: aiohttp.ClientSession, url: str, text: str, conversation_id: str) -> tuple[dict, float]:
    started = time.monotonic()
    async with session.post(url, json={"text": text, "conversation_id": conversation_id, "language": "fr"}) as response:
        assert response.status == 200, await response.text()
        return await response.json(), time.monotonic() - started


async def test_a_flood_of_forty_asks_is_answered_or_told_busy_and_nothing_times_out(
        tmp_path: Path, gemma_path: Path) -> None:
    hub = ServedHub(tmp_path, gemma_path, {"api_token": TOKEN, "turn_timeout": TURN_TIMEOUT, "max_tokens": 48, "threads": 1,
                                           "fast_path": "false"}).start()
    url = f"http://127.0.0.1:{hub.ports['http_port']}/api/ask"
    asker = MqttAsker(hub.mqtt_port)
    session = aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"},
                                    timeout=aiohttp.ClientTimeout(total=TURN_TIMEOUT + 60))
    try:
        asker.wait_connected()
        # the queue learns a turn's length from the turns before (the first, cold, is long): after
        # a few warm ones it admits what it can do in time, so the burst shows how it shares that
        warm = [(await rest_ask(session, url, "dis quelque chose de gentil", f"warm-up-{turn}"))[0] for turn in range(WARM_TURNS)]
        assert any(reply["ok"] for reply in warm), warm
        rest = [asyncio.create_task(rest_ask(session, url, MODEL_TEXTS_IN["fr"][i % len(MODEL_TEXTS_IN["fr"])], f"rest-{i}"))
                for i in range(ASKS)]
        await asyncio.sleep(0.05)  # the REST asks go out first, as in the probe that found I4
        ids = [f"mqtt-{i}" for i in range(ASKS)]
        sent = {}
        for i, ask_id in enumerate(ids):
            payload = {"id": ask_id, "text": MODEL_TEXTS_IN["de"][i % len(MODEL_TEXTS_IN["de"])], "conversation_id": f"mqtt-conv-{i}",
                       "language": "de"}
            sent[ask_id] = time.monotonic()
            asker.client.publish(f"{asker.base}/ask", json.dumps(payload), qos=1)
        async with asyncio.timeout(TURN_TIMEOUT + 90):
            rest_results = await asyncio.gather(*rest)
            await asker.wait_for(ids, TURN_TIMEOUT + 60)
    finally:
        await session.close()
        asker.close()
        hub.stop()

    missing = [i for i in ids if asker.reply_for(i) is None]
    assert not missing, f"asks without a reply: {missing}"
    # (reply, its spoken text, seconds from asking to the reply, the ask's language)
    answers = [(reply, reply["reply"], took, "fr") for reply, took in rest_results]
    for ask_id in ids:
        arrived, reply = asker.reply_for(ask_id)
        answers.append((reply, reply["text"], arrived - sent[ask_id], "de"))
    for reply, text, took, language in answers:
        assert reply["ok"] or reply["error"] == "busy", reply  # never "timeout"
        if not reply["ok"]:
            assert text == phrase(language, "error.busy"), reply
        assert took < TURN_TIMEOUT, (reply, took)
    answered = sum(reply["ok"] for reply, *_ in answers)
    busy = [took for reply, _, took, _ in answers if not reply["ok"]]
    by_interface = {language: sum(reply["ok"] for reply, _, _, said in answers if said == language)
                    for language in ("fr", "de")}  # REST asks in French, MQTT asks in German
    print(f"answered: REST {by_interface['fr']}, MQTT {by_interface['de']}; {len(busy)} busy (at most "
          f"{max(busy, default=0):.2f} s after asking)")
    assert answered >= 1 and busy, "a flood of 40 asks was neither served nor refused"
    assert abs(by_interface["fr"] - by_interface["de"]) <= ASKS // 10, by_interface  # alike, within 10 %
    assert max(busy) < 1.0, sorted(busy)  # every "busy" at once
    assert "Traceback" not in hub.log()
