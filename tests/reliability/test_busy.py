"""A hub with `queue_size: 1` flooded with model asks over Wyoming and MQTT at once.

The option says: "How many requests may wait for the model at once. Further requests get a busy
reply." So one turn runs, one waits, the rest are refused with the clear, localized busy phrase
(error code "busy"): none lost, none hanging, and a conversation's answers come in its order.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from hub.locales import phrase
from reliability.served_hub import MODEL_TEXTS, MODEL_TEXTS_IN, Answer, MqttAsker, ServedHub, wyoming_turn

pytestmark = [pytest.mark.slow, pytest.mark.timeout(480)]

WYOMING_CLIENTS = 6
MQTT_ASKS = 6  # in pairs sharing a conversation


def ask_in(asker: MqttAsker, ask_id: str, text: str, conversation_id: str, language: str) -> None:
    payload = {"id": ask_id, "text": text, "conversation_id": conversation_id, "language": language}
    asker.client.publish(f"{asker.base}/ask", json.dumps(payload), qos=1)


async def test_queue_size_one_flood_gets_answers_or_the_localized_busy_reply(tmp_path: Path, gemma_path: Path) -> None:
    hub = ServedHub(tmp_path, gemma_path, {"queue_size": 1, "max_tokens": 32, "fast_path": "false"}).start()
    asker = MqttAsker(hub.mqtt_port)
    try:
        asker.wait_connected()
        wyoming = [asyncio.create_task(wyoming_turn(hub.ports["wyoming_port"], MODEL_TEXTS[i % len(MODEL_TEXTS)],
                                                    "model", f"flood-{i}", timeout=300))
                   for i in range(WYOMING_CLIENTS)]
        ids = [f"m{i}" for i in range(MQTT_ASKS)]
        for i, ask_id in enumerate(ids):  # German asks: their busy reply must be in German
            ask_in(asker, ask_id, MODEL_TEXTS_IN["de"][i % len(MODEL_TEXTS_IN["de"])], f"flood-conv-{i // 2}", "de")
        async with asyncio.timeout(360):
            answers: list[Answer] = list(await asyncio.gather(*wyoming))
            await asker.wait_for(ids, 300)

        missing = [i for i in ids if asker.reply_for(i) is None]
        assert not missing, f"asks without a reply: {missing}"
        mqtt_replies = {i: asker.reply_for(i)[1] for i in ids}
        for answer in answers:
            assert answer.outcome in ("handled", "busy"), answer
            if answer.outcome == "busy":
                assert answer.text == phrase("en", "error.busy"), answer
            assert answer.text.strip(), answer
        for ask_id, reply in mqtt_replies.items():
            assert reply["ok"] or reply["error"] == "busy", reply
            if not reply["ok"]:
                assert reply["text"] == phrase("de", "error.busy"), reply
            assert reply["text"].strip(), reply

        answered = sum(a.outcome == "handled" for a in answers) + sum(r["ok"] for r in mqtt_replies.values())
        busy = WYOMING_CLIENTS + MQTT_ASKS - answered
        # bounded: not everything got in; and one request may wait behind the running one
        assert busy >= 1, "a flood of 12 model asks against queue_size 1 was never refused"
        assert answered >= 2, f"only {answered} answered: queue_size 1 should let one request wait"
        # per conversation, the answers that were given came in the asks' order
        for pair in range(MQTT_ASKS // 2):
            given = [i for i in ids[pair * 2:pair * 2 + 2] if mqtt_replies[i]["ok"]]
            arrival = sorted(given, key=lambda i: asker.reply_for(i)[0])
            assert arrival == given, (pair, arrival)

        # a burst in one conversation: the first runs, the next waits its turn (the queue of 1),
        # the rest are refused at once by the MQTT API, in the asker's language
        burst = [f"b{i}" for i in range(4)]
        for ask_id in burst:
            ask_in(asker, ask_id, "erzähl mir einen kurzen Witz", "burst", "de")
        await asker.wait_for(burst, 300)
        got = {i: asker.reply_for(i) for i in burst}
        assert all(got.values()), got
        assert got["b0"][1]["ok"] and got["b1"][1]["ok"], got
        assert got["b0"][0] < got["b1"][0], "the conversation's answers came out of order"
        refused = [got[i][1] for i in burst[2:] if not got[i][1]["ok"]]
        assert refused, "a burst of 4 against queue_size 1 was never refused"
        assert all(r["error"] == "busy" and r["text"] == phrase("de", "error.busy") for r in refused), refused

        # nothing stayed stuck in the queue: once the flood is over, asks are answered again
        ask_in(asker, "after", "say something nice", "after-flood", "en")
        await asker.wait_for(["after"], 180)
        after = asker.reply_for("after")
        assert after is not None and after[1]["ok"], after
        calm = await wyoming_turn(hub.ports["wyoming_port"], "how are you today", "model", "calm", timeout=180)
        assert calm.outcome == "handled", calm
        assert hub.process.poll() is None
    finally:
        asker.close()
        hub.stop()
    assert "Traceback" not in hub.log()
