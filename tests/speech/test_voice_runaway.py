"""Runaway output ends on the voice route too (issue 16): a spoken question through real
faster-whisper and Piper peers, the real agent behind them, and a model caught in a loop. The
reply, and what is handed to text-to-speech, stay within `max_reply_chars`, the loop said once."""

from __future__ import annotations

import json

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from speech.speech_helpers import as_recording

from hub.agent.agent import Agent
from hub.interfaces.voice.pipeline import VoicePipeline
from hub.config import validate
from hub.options import hub_options
from hub.core.tools import ToolRegistry
from hub.transport.speech_clients import PcmFormat, WyomingSTT, WyomingTTS, to_wav
from hub.interfaces.voice.http import add_voice_routes
from hub.settings import RuntimeSettings
from helpers.scripted_engine import LOOPS, LoopingEngine

pytestmark = pytest.mark.timeout(180)
MAX_REPLY = 120


@pytest.mark.parametrize("loop", sorted(LOOPS))
async def test_a_loop_is_stopped_on_the_voice_route(loop, stt: WyomingSTT, tts: WyomingTTS, tmp_path) -> None:
    engine = LoopingEngine()
    engine.loop = LOOPS[loop]
    config = validate({"data_dir": str(tmp_path), "max_reply_chars": MAX_REPLY, "fast_path": False})
    agent = Agent(engine=engine, registry=ToolRegistry(), settings=RuntimeSettings(hub_options(config).settings), options=hub_options(config).agent)
    app = web.Application()
    add_voice_routes(app, VoicePipeline(agent, stt=stt, tts=tts), allow=lambda request: True)
    question = as_recording([chunk async for chunk in tts.synthesize("What is the capital of France?", "en")])
    wav = to_wav(PcmFormat(question[0].rate, question[0].width, question[0].channels),
                 b"".join(c.audio for c in question))
    async with TestClient(TestServer(app, host="127.0.0.1")) as client:
        response = await client.post("/api/voice?language=en", data=wav, headers={"Content-Type": "audio/wav"})
        events = [json.loads(line) for line in (await response.text()).splitlines()]
    done = events[-1]
    spoken = " ".join(e["text"] for e in events if e["type"] == "sentence")
    assert done["type"] == "done" and done["reply"], events
    for text in (done["reply"], spoken):
        assert len(text) <= MAX_REPLY, text
        assert text.count("Garou") <= 1 and text.count("sword") <= 1, text
    assert max(engine.read) < 50, f"the hub kept reading the loop: {engine.read}"
