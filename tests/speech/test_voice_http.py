"""The voice routes: streamed NDJSON over POST and push-to-talk over a WebSocket, real peers."""

from __future__ import annotations

import asyncio
import audioop
import base64
import json

import pytest
from aiohttp import WSMsgType, web
from aiohttp.test_utils import TestClient, TestServer
from speech.speech_helpers import ScriptedAgent, as_recording, normalize_words
from wyoming.audio import AudioChunk, AudioChunkConverter

from hub.interfaces.voice.pipeline import VoicePipeline
from hub.interfaces.voice import http as voice_http
from hub.transport.speech_clients import PcmFormat, WyomingSTT, WyomingTTS, to_wav
from hub.interfaces.voice.http import add_voice_routes

pytestmark = pytest.mark.timeout(180)
COMMAND = "Turn on the kitchen light."
REPLY = ["The kitchen light is now on.", " Anything else?"]


@pytest.fixture
async def command_audio(tts: WyomingTTS) -> AudioChunk:
    chunks = as_recording([chunk async for chunk in tts.synthesize(COMMAND, "en")])
    return AudioChunk(chunks[0].rate, chunks[0].width, chunks[0].channels, b"".join(c.audio for c in chunks))


@pytest.fixture
def agent() -> ScriptedAgent:
    return ScriptedAgent(REPLY, delay=0.05)


@pytest.fixture
def pipeline(agent: ScriptedAgent, stt: WyomingSTT, tts: WyomingTTS) -> VoicePipeline:
    return VoicePipeline(agent, stt=stt, tts=tts)


@pytest.fixture
async def client(pipeline: VoicePipeline):
    app = web.Application()
    add_voice_routes(app, pipeline,
                     allow=lambda request: request.headers.get("Authorization") == "Bearer secret")
    async with TestClient(TestServer(app, host="127.0.0.1")) as test_client:
        test_client.session.headers["Authorization"] = "Bearer secret"
        yield test_client


def lines_of(body: str) -> list[dict]:
    return [json.loads(line) for line in body.splitlines()]


def reply_audio(events: list[dict], frames: list[bytes] | None = None) -> list[AudioChunk]:
    start = next(e for e in events if e["type"] == "audio_start")
    pieces = frames if frames is not None else [base64.b64decode(e["data"]) for e in events if e["type"] == "audio"]
    return [AudioChunk(start["rate"], start["width"], start["channels"], piece) for piece in pieces]


async def test_post_stereo_wav_streams_transcript_reply_and_audio(client: TestClient, stt: WyomingSTT,
                                                                  command_audio: AudioChunk) -> None:
    stereo = audioop.tostereo(command_audio.audio, 2, 1.0, 1.0)
    wav = to_wav(PcmFormat(22050, 2, 2), stereo)
    response = await client.post("/api/voice?language=en&conversation_id=k1", data=wav,
                                 headers={"Content-Type": "audio/wav"})
    assert response.status == 200 and response.headers["Content-Type"].startswith("application/x-ndjson")
    events = lines_of(await response.text())
    kinds = [e["type"] for e in events]
    assert kinds[0] == "transcript" and kinds[-1] == "done"
    assert kinds.index("audio_start") < kinds.index("audio") < kinds.index("audio_stop")
    assert normalize_words(events[0]["text"]) == normalize_words(COMMAND)
    assert "".join(e["text"] for e in events if e["type"] == "reply") == "".join(REPLY)
    done = events[-1]
    assert done["ok"] and done["conversation_id"] == "k1" and done["timings"]["first_audio_s"] is not None
    heard = await stt.transcribe(as_recording(reply_audio(events)), "en")
    assert normalize_words(heard) == normalize_words("".join(REPLY))


async def test_post_raw_pcm_with_format_parameters(client: TestClient, agent: ScriptedAgent,
                                                   command_audio: AudioChunk) -> None:
    pcm16k = AudioChunkConverter(rate=16000, width=2, channels=1).convert(command_audio).audio
    response = await client.post("/api/voice?rate=16000&width=2&channels=1&persona=robot", data=pcm16k)
    events = lines_of(await response.text())
    assert normalize_words(events[0]["text"]) == normalize_words(COMMAND)
    assert normalize_words(agent.requests[0].text) == normalize_words(COMMAND)
    assert agent.requests[0].persona == "robot"  # who the spoken request talks to
    assert events[-1]["ok"]


async def test_post_client_leaving_mid_reply_does_not_stop_the_turn(
        client: TestClient, pipeline: VoicePipeline, command_audio: AudioChunk) -> None:
    response = await client.post("/api/voice", data=to_wav(PcmFormat(22050, 2, 1), command_audio.audio))
    first = json.loads(await response.content.readline())
    assert first["type"] == "transcript"
    response.close()
    for _ in range(600):
        if pipeline.metrics.turns:
            break
        await asyncio.sleep(0.05)
    assert pipeline.metrics.snapshot()["last"]["total_s"] is not None


@pytest.mark.parametrize(
    ("query", "body", "status", "message"),
    [
        ("", b"RIFF\x00\x00\x00\x00WAVEjunk", 400, "not a PCM WAV"),
        ("?rate=fast", bytes(320), 400, "rate must be a whole number"),
        ("?channels=2", bytes(322), 400, "whole number of 4-byte frames"),
        ("?width=5", bytes(320), 400, "sample width"),
        ("", b"", 400, "no audio"),
    ],
)
async def test_post_rejects_unusable_audio(client: TestClient, agent: ScriptedAgent, query: str,
                                           body: bytes, status: int, message: str) -> None:
    response = await client.post("/api/voice" + query, data=body)
    assert response.status == status
    payload = await response.json()
    assert payload["error"] == "bad_audio" and message in payload["message"]
    assert not agent.requests


async def test_post_too_large_and_unauthorized(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(voice_http, "MAX_BODY_BYTES", 1000)
    response = await client.post("/api/voice", data=bytes(2000))
    assert response.status == 413 and (await response.json())["error"] == "too_large"
    response = await client.post("/api/voice", data=bytes(320), headers={"Authorization": "Bearer wrong"})
    assert response.status == 401
    response = await client.get("/api/voice/ws", headers={"Authorization": "Bearer wrong"})
    assert response.status == 401


async def push_to_talk(ws, audio: AudioChunk, **start) -> tuple[list[dict], list[bytes]]:
    await ws.send_json({"type": "start", "rate": audio.rate, "width": audio.width,
                        "channels": audio.channels, **start})
    step = int(audio.rate * 0.1) * audio.width * audio.channels
    for offset in range(0, len(audio.audio), step):
        await ws.send_bytes(audio.audio[offset:offset + step])
    await ws.send_json({"type": "stop"})
    events, frames = [], []
    while True:
        message = await ws.receive(timeout=60)
        if message.type == WSMsgType.BINARY:
            frames.append(message.data)
            continue
        event = json.loads(message.data)
        events.append(event)
        if event["type"] == "done":
            return events, frames


async def test_websocket_push_to_talk_two_turns(client: TestClient, agent: ScriptedAgent, stt: WyomingSTT,
                                                command_audio: AudioChunk) -> None:
    async with client.ws_connect("/api/voice/ws") as ws:
        events, frames = await push_to_talk(ws, command_audio, language="en", conversation_id="ptt")
        assert normalize_words(events[0]["text"]) == normalize_words(COMMAND)
        assert [e["type"] for e in events if e["type"].startswith("audio")] == ["audio_start", "audio_stop"]
        heard = await stt.transcribe(as_recording(reply_audio(events, frames)), "en")
        assert normalize_words(heard) == normalize_words("".join(REPLY))
        again, _ = await push_to_talk(ws, command_audio, conversation_id="ptt")
        assert again[-1]["ok"]
    assert [r.conversation_id for r in agent.requests] == ["ptt", "ptt"]
    metrics = await (await client.get("/api/voice/metrics")).json()
    assert metrics["turns"] == 2 and metrics["median"]["first_audio_s"] is not None


async def test_websocket_protocol_mistakes_are_named(client: TestClient) -> None:
    async with client.ws_connect("/api/voice/ws") as ws:
        for send, expected in [
            (ws.send_bytes(bytes(320)), "audio before start"),
            (ws.send_str("not json"), "not a JSON object"),
            (ws.send_json({"type": "dance"}), "unknown message type"),
            (ws.send_json({"type": "stop"}), "stop without start"),
            (ws.send_json({"type": "start", "rate": 5}), "sample rate"),
        ]:
            await send
            error = await ws.receive_json(timeout=10)
            assert error["type"] == "error" and error["code"] == "bad_request" and expected in error["message"]


async def test_websocket_closed_while_listening_abandons_the_turn(client: TestClient, agent: ScriptedAgent,
                                                                  command_audio: AudioChunk) -> None:
    async with client.ws_connect("/api/voice/ws") as ws:
        await ws.send_json({"type": "start", "rate": command_audio.rate})
        await ws.send_bytes(command_audio.audio)
    async with client.ws_connect("/api/voice/ws") as ws:
        events, _ = await push_to_talk(ws, command_audio, conversation_id="second")
        assert events[-1]["ok"]
    assert [r.conversation_id for r in agent.requests] == ["second"]


async def test_websocket_closed_after_stop_still_runs_the_turn(client: TestClient, agent: ScriptedAgent,
                                                               command_audio: AudioChunk) -> None:
    """The user finished speaking: the command is understood and carried out even if the
    client goes away before the reply."""
    async with client.ws_connect("/api/voice/ws") as ws:
        await ws.send_json({"type": "start", "rate": command_audio.rate, "conversation_id": "gone"})
        await ws.send_bytes(command_audio.audio)
        await ws.send_json({"type": "stop"})
    for _ in range(600):
        if agent.requests:
            break
        await asyncio.sleep(0.05)
    assert [r.conversation_id for r in agent.requests] == ["gone"]
