"""Issue 39's requests, verbatim, through the surface where they were heard: a served hub
(`python -m hub serve`) on its embedded defaults — SmolLM2, the demo home — asked over REST
with no language named. Every reply passes the hub's judge (`helpers.unspoken_judge`); those
the hub answers itself are its own words."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import aiohttp
import pytest
from wyoming.asr import Transcript
from wyoming.client import AsyncTcpClient

from hub.agent.stand_in_routes import can_do
from hub.locales import phrase
from hub.understanding import language as language_id

from helpers.unspoken_judge import Judge, read_of
from reliability.served_hub import ServedHub

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

TOKEN = "stand-in-served-token"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, smollm_path: Path) -> Iterator[ServedHub]:
    hub = ServedHub(tmp_path_factory.mktemp("served"), smollm_path, {"api_token": TOKEN, "max_tokens": 256}).start()
    yield hub
    hub.stop()


async def ask(hub: ServedHub, text: str) -> dict[str, Any]:
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"}) as session:
        base = f"http://127.0.0.1:{hub.ports['http_port']}"
        async with session.post(f"{base}/api/ask", json={"text": text}) as response:
            answer: dict[str, Any] = await response.json()
        async with session.get(f"{base}/api/entities") as response:
            answer["names"] = [n for e in await response.json() for n in (e["name"], e["area"] or "")]
    return answer


HEARD = [  # (request, its language, what the hub says itself: a phrase key, or None where the model may chat)
    ("what's the temperature inside?", "en", None),  # "The user asked for a response in English."
    ("what's the weather like?", "en", "missing.weather"),  # "what's the weather like?: off. I didn't change anything."
    ("what can you do?", "en", "can_do"),  # "I'm glad you're happy with the tools I've created…"
    ("Wie wird das Wetter?", "de", "missing.weather"),  # "Wie wird das Wetter?"
    ("Erzähl mir einen Witz", "de", None),  # "Erzähl mir einen Witz. Ich habe nichts verändert."
    ("Cuéntame un chiste", "es", None),  # "El cambio de la cambión de la cronuma … El cambio de la c"
    ("blorp the fnord please", "en", None),  # "The user replied to the function "blorp the fnord please" in English."
    ("how many lights are on?", "en", None),  # "You can call this tool."
    ("is it sunny or cloudy today?", "en", "missing.weather"),  # "Today is sunny."
    ("read my emails", "en", "cannot_do"),  # "I'm glad to hear that you're enjoying your trip to the UK."
]


async def test_the_requests_heard_wrongly_are_answered_by_the_judges_rules(served: ServedHub) -> None:
    assert await language_id.prepare()
    faults = []
    for text, language, own in HEARD:
        answer = await ask(served, text)
        reply = answer["reply"]
        found = Judge(names=answer["names"]).faults(reply, language, text, read_of(answer))
        if found:
            faults.append((text, reply, found))
        if own == "can_do":
            assert reply.startswith(can_do(language, None)), reply
        elif own == "cannot_do":
            assert reply == f"{phrase(language, 'self.cannot_do')} {can_do(language, None)}", reply
        elif own is not None:
            assert reply == phrase(language, own), (text, reply)
    assert faults == []


async def test_a_story_is_spoken_as_far_as_it_passes_and_that_is_the_reply(served: ServedHub) -> None:
    """SmolLM2's story over Wyoming, sentence by sentence as each passes the judge: the chunks
    spoken are the reply `handled` says and what the history keeps (REST)."""
    chunks, reply, conversation = [], None, "story-1"
    async with AsyncTcpClient("127.0.0.1", served.ports["wyoming_port"]) as client:
        await client.write_event(Transcript(text="tell me a story about a cat",
                                            context={"conversation_id": conversation}).event())
        while reply is None:
            event = await client.read_event()
            assert event is not None and event.type != "not-handled", event
            if event.type == "handled-chunk":
                chunks.append(event.data["text"])
            elif event.type == "handled":
                reply = event.data["text"]
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"}) as session:
        async with session.get(f"http://127.0.0.1:{served.ports['http_port']}/api/conversations/{conversation}") \
                as response:
            history = (await response.json())["messages"]
    assert chunks and "".join(chunks) == reply == history[-1]["content"], (chunks, reply)
