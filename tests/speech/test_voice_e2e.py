"""A spoken command through the whole hub: Piper's audio → faster-whisper → the real agent
(SmolLM2 engine, demo home, fast path) → the demo light turns on → the spoken reply reads back."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from speech.speech_helpers import as_recording, normalize_words, sounds_like
from wyoming.audio import AudioChunk

from hub.interfaces.voice.pipeline import VoicePipeline
from hub.interfaces.voice.events import (
    VoiceAudioChunk,
    VoiceAudioStart,
    VoiceDone,
    VoiceError,
    VoiceReplyChunk,
    VoiceTranscript,
)
from hub.app import HubApp
from hub.config import validate
from hub.transport.speech_clients import WyomingSTT, WyomingTTS

pytestmark = pytest.mark.timeout(300)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
async def hub(tmp_path: Path, smollm_path: Path):
    config = validate({"data_dir": str(tmp_path), "model_path": str(smollm_path), "n_ctx": 4096,
                       "max_tokens": 24, "turn_timeout": 240, "mqtt_port": free_port()})
    app = HubApp(config)  # embedded default: in-process broker with the MQTT demo home
    await app.start(listeners=False)
    try:
        yield app
    finally:
        await app.stop()


async def test_spoken_command_turns_on_the_demo_light_and_the_reply_is_spoken(
        hub: HubApp, tts: WyomingTTS, stt: WyomingSTT) -> None:
    assert hub.store.get("light.kitchen_light").state == "off"
    command = as_recording([chunk async for chunk in tts.synthesize("Turn on the kitchen light.", "en")])
    pipeline = VoicePipeline(hub.agent, stt=stt, tts=tts)
    events = [event async for event in pipeline.run(command, language="en", conversation_id="e2e")]

    assert not [e for e in events if isinstance(e, VoiceError)]
    [transcript] = [e for e in events if isinstance(e, VoiceTranscript)]
    assert normalize_words(transcript.text) == "turn on the kitchen light"
    done = events[-1]
    assert isinstance(done, VoiceDone) and done.ok
    assert [call.call.name for call in done.result.tool_calls] == ["turn_on"]
    assert hub.store.get("light.kitchen_light").state == "on"

    reply = "".join(e.text for e in events if isinstance(e, VoiceReplyChunk))
    assert reply.strip() == done.reply and "kitchen" in reply.lower()
    start = next(e for e in events if isinstance(e, VoiceAudioStart))
    audio = [AudioChunk(start.rate, start.width, start.channels, e.audio)
             for e in events if isinstance(e, VoiceAudioChunk)]
    heard = await stt.transcribe(as_recording(audio), "en")
    assert sounds_like(heard, done.reply), (heard, done.reply)
