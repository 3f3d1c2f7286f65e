"""Voice turns over HTTP: one streamed POST, and a WebSocket for push-to-talk.

`add_voice_routes(app, pipeline, allow=None)` adds the routes to an `aiohttp.web.Application`
(the REST API passes it as a route hook, so its token check covers them; `allow` is for apps
without that middleware).

POST /api/voice?language=&conversation_id=&persona=&voice=&rate=&width=&channels=&device_id=&satellite_id=&area=
    Body: a WAV file (any PCM rate/width/channels), or raw little-endian PCM described by
    rate/width/channels (default 16000/2/1). At most 60 s of audio.
    Response: `application/x-ndjson`, one JSON object per line, in this order:
      {"type": "transcript", "text", "language"}
      {"type": "reply", "text"}                     reply text as the agent streams it
      {"type": "sentence", "text"}                  a sentence handed to TTS
      {"type": "audio_start", "rate", "width", "channels"}
      {"type": "audio", "data": <base64 PCM>}       in the format of audio_start
      {"type": "audio_stop"}
      {"type": "error", "stage", "code", "message", "detail"}   stage: input|stt|agent|tts
      {"type": "done", "ok", "language", "transcript", "reply", "error", "conversation_id", "timings"}
    device_id, satellite_id or area say where it was spoken (the speaker's room, as on /api/ask).
    Input that cannot be used (bad WAV, bad parameters, empty, too large) is a 400/413 JSON
    error `{"error", "message"}` before any streaming starts.

GET /api/voice/ws  (WebSocket)
    Client: {"type": "start", "rate": 16000, "width": 2, "channels": 1, "language", "conversation_id",
    "persona", "voice", "device_id", "satellite_id", "area"} (all optional), then binary frames of PCM (whole frames), then {"type": "stop"}.
    Server: the JSON events above, except that audio comes as binary frames between
    audio_start and audio_stop. After "done" the socket takes the next "start".
    Protocol mistakes get {"type": "error", "stage": "input", "code": "bad_request", ...}.

GET /api/voice/metrics: the voice turns' stage timings (`VoiceMetrics.snapshot()`).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
from dataclasses import asdict
from typing import Any, AsyncIterator, Callable

from aiohttp import WSMsgType, web
from wyoming.audio import AudioChunk

from hub.interfaces.voice.pipeline import MAX_INPUT_SECONDS, VoicePipeline
from hub.interfaces.voice.events import (
    VoiceAudioChunk,
    VoiceAudioStart,
    VoiceAudioStop,
    VoiceDone,
    VoiceError,
    VoiceEvent,
    VoiceReplyChunk,
    VoiceSentence,
    VoiceTranscript,
)
from hub.transport.speech_clients import AudioInputError, PcmFormat, chunks_from_audio_bytes, pcm_chunks

_LOGGER = logging.getLogger(__name__)

NDJSON = "application/x-ndjson"
# 60 s of 48 kHz 32-bit stereo, plus a WAV header: the most audio a turn may carry
MAX_BODY_BYTES = int(MAX_INPUT_SECONDS * 48000 * 4 * 2) + 1024
MAX_FRAME_BYTES = 1024 * 1024
_RUNNING_TURNS: set[asyncio.Task[None]] = set()  # turns that outlive their socket, kept referenced


def add_voice_routes(app: web.Application, pipeline: VoicePipeline,
                     allow: Callable[[web.Request], bool] | None = None) -> None:
    routes = _VoiceRoutes(pipeline, allow)
    app.router.add_post("/api/voice", routes.post)
    app.router.add_get("/api/voice/ws", routes.websocket)
    app.router.add_get("/api/voice/metrics", routes.metrics)


def event_json(event: VoiceEvent, conversation_id: str | None = None) -> dict[str, Any]:
    """The wire form of a voice event (audio chunks as base64)."""
    if isinstance(event, VoiceTranscript):
        return {"type": "transcript", "text": event.text, "language": event.language}
    if isinstance(event, VoiceReplyChunk):
        return {"type": "reply", "text": event.text}
    if isinstance(event, VoiceSentence):
        return {"type": "sentence", "text": event.text}
    if isinstance(event, VoiceAudioStart):
        return {"type": "audio_start", "rate": event.rate, "width": event.width, "channels": event.channels}
    if isinstance(event, VoiceAudioChunk):
        return {"type": "audio", "data": base64.b64encode(event.audio).decode("ascii")}
    if isinstance(event, VoiceAudioStop):
        return {"type": "audio_stop"}
    if isinstance(event, VoiceError):
        return {"type": "error", "stage": event.stage, "code": event.code, "message": event.message,
                "detail": event.detail}
    if isinstance(event, VoiceDone):
        result_id = event.result.conversation_id if event.result is not None else None
        return {"type": "done", "ok": event.ok, "language": event.language, "transcript": event.transcript,
                "reply": event.reply, "error": event.error, "conversation_id": result_id or conversation_id,
                "timings": asdict(event.timings)}
    raise TypeError(f"unexpected voice event {event!r}")


class _BadRequest(Exception):
    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class _VoiceRoutes:
    def __init__(self, pipeline: VoicePipeline, allow: Callable[[web.Request], bool] | None) -> None:
        self.pipeline = pipeline
        self.allow = allow

    def _check(self, request: web.Request) -> web.Response | None:
        if self.allow is None or self.allow(request):
            return None
        return _json_error(401, "unauthorized", "Send the hub's API token as 'Authorization: Bearer <token>'.")

    async def metrics(self, request: web.Request) -> web.Response:
        return self._check(request) or web.json_response(self.pipeline.metrics.snapshot())

    # --- POST /api/voice ----------------------------------------------------------------------

    async def post(self, request: web.Request) -> web.StreamResponse:
        if denied := self._check(request):
            return denied
        try:
            options = _turn_options(request.query)
            fmt = _pcm_format(request.query)
            body = await _read_body(request)
            chunks = chunks_from_audio_bytes(body, fmt)
            if not chunks:
                raise _BadRequest("the request carries no audio")
        except (_BadRequest, AudioInputError) as err:
            status = err.status if isinstance(err, _BadRequest) else 400
            return _json_error(status, "too_large" if status == 413 else "bad_audio", str(err))

        response = web.StreamResponse(headers={"Content-Type": NDJSON, "Cache-Control": "no-cache",
                                               "X-Accel-Buffering": "no"})
        await response.prepare(request)

        async def stream() -> None:
            connected = True
            async for event in self.pipeline.run(chunks, source="rest", **options):
                if connected:
                    line = json.dumps(event_json(event, options["conversation_id"]), ensure_ascii=False)
                    connected = await _write(response, line.encode() + b"\n")
            if connected:
                with contextlib.suppress(ConnectionResetError, RuntimeError):
                    await response.write_eof()

        await _outliving_the_client(asyncio.create_task(stream()))
        return response

    # --- GET /api/voice/ws --------------------------------------------------------------------

    async def websocket(self, request: web.Request) -> web.StreamResponse:
        if denied := self._check(request):
            return denied
        ws = web.WebSocketResponse(max_msg_size=MAX_FRAME_BYTES, heartbeat=30)
        await ws.prepare(request)
        session = _PushToTalk(self.pipeline, ws)
        try:
            async for message in ws:
                if message.type == WSMsgType.TEXT:
                    await session.on_text(message.data)
                elif message.type == WSMsgType.BINARY:
                    await session.on_audio(message.data)
                elif message.type == WSMsgType.ERROR:
                    break
        finally:
            await session.close()
        return ws


class _PushToTalk:
    """One WebSocket: at most one turn at a time; audio frames stream to STT as they arrive."""

    def __init__(self, pipeline: VoicePipeline, ws: web.WebSocketResponse) -> None:
        self.pipeline = pipeline
        self.ws = ws
        self.audio: asyncio.Queue[AudioChunk | None] | None = None
        self.format: PcmFormat | None = None
        self.turn: asyncio.Task[None] | None = None

    @property
    def listening(self) -> bool:
        return self.audio is not None

    async def on_text(self, text: str) -> None:
        try:
            message = json.loads(text)
            if not isinstance(message, dict):
                raise ValueError("a message must be a JSON object")
        except ValueError as err:
            await self._protocol_error(f"not a JSON object: {err}")
            return
        kind = message.get("type")
        if kind == "start":
            await self._start(message)
        elif kind == "stop":
            if not self.listening:
                await self._protocol_error("stop without start")
                return
            self._end_audio()
        else:
            await self._protocol_error(f"unknown message type {kind!r} (expected start or stop)")

    async def on_audio(self, data: bytes) -> None:
        if not self.listening or self.format is None:
            await self._protocol_error("audio before start")
            return
        try:
            chunks = pcm_chunks(self.format, data)
        except AudioInputError as err:
            await self._protocol_error(str(err))
            return
        if self.turn is not None and not self.turn.done():  # a turn that failed early takes no more
            for chunk in chunks:
                self.audio.put_nowait(chunk)  # type: ignore[union-attr]

    async def _start(self, message: dict[str, Any]) -> None:
        if self.turn is not None and not self.turn.done():
            await self._protocol_error("a turn is already running on this socket")
            return
        try:
            options = _turn_options(message)
            self.format = _pcm_format(message)
        except _BadRequest as err:
            await self._protocol_error(str(err))
            return
        self.audio = asyncio.Queue()
        self.turn = asyncio.create_task(self._run(self._frames(self.audio), options))

    async def _frames(self, queue: asyncio.Queue[AudioChunk | None]) -> AsyncIterator[AudioChunk]:
        while (chunk := await queue.get()) is not None:
            yield chunk

    def _end_audio(self) -> None:
        if self.audio is not None:
            self.audio.put_nowait(None)
        self.audio = None

    async def _run(self, frames: AsyncIterator[AudioChunk], options: dict[str, Any]) -> None:
        try:
            async for event in self.pipeline.run(frames, source="rest", **options):
                if self.ws.closed:
                    continue  # finish the turn: an understood command still happens
                if isinstance(event, VoiceAudioChunk):
                    await self.ws.send_bytes(event.audio)
                else:
                    await self.ws.send_json(event_json(event, options["conversation_id"]))
        except (ConnectionResetError, RuntimeError) as err:
            _LOGGER.info("voice websocket closed during a turn: %s", err)

    async def _protocol_error(self, detail: str) -> None:
        if not self.ws.closed:
            await self.ws.send_json({"type": "error", "stage": "input", "code": "bad_request",
                                     "message": detail, "detail": detail})

    async def close(self) -> None:
        """A socket closed while still listening abandons its half-spoken turn; a turn whose audio
        was complete runs to its end (an understood command still happens)."""
        if self.turn is None:
            return
        if self.listening:
            self.turn.cancel()
        self._end_audio()
        with contextlib.suppress(asyncio.CancelledError):
            await _outliving_the_client(self.turn)


async def _outliving_the_client(turn: asyncio.Task[None]) -> None:
    """Wait for a turn whose audio is complete. aiohttp cancels a handler whose client has gone;
    the turn is shielded from that, because an understood command must still be carried out."""
    _RUNNING_TURNS.add(turn)
    turn.add_done_callback(_RUNNING_TURNS.discard)
    await asyncio.shield(turn)


# --- parameters --------------------------------------------------------------------------------


def _turn_options(values: Any) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for name in ("language", "conversation_id", "persona", "voice", "device_id", "satellite_id", "area"):
        value = values.get(name)
        if value is not None and (not isinstance(value, str) or len(value) > 200):
            raise _BadRequest(f"{name} must be a string of at most 200 characters")
        options[name] = value or None
    return options


def _pcm_format(values: Any) -> PcmFormat:
    numbers = {}
    for name, default in (("rate", 16000), ("width", 2), ("channels", 1)):
        raw = values.get(name, default)
        try:
            numbers[name] = int(raw)
        except (TypeError, ValueError):
            raise _BadRequest(f"{name} must be a whole number, not {raw!r}") from None
    try:
        return PcmFormat(**numbers).check()
    except AudioInputError as err:
        raise _BadRequest(str(err)) from None


async def _read_body(request: web.Request) -> bytes:
    if request.content_length is not None and request.content_length > MAX_BODY_BYTES:
        raise _BadRequest(f"the audio is larger than {MAX_BODY_BYTES} bytes", 413)
    body = bytearray()
    async for block in request.content.iter_chunked(64 * 1024):
        body += block
        if len(body) > MAX_BODY_BYTES:
            raise _BadRequest(f"the audio is larger than {MAX_BODY_BYTES} bytes", 413)
    return bytes(body)


async def _write(response: web.StreamResponse, payload: bytes) -> bool:
    """Write a line; False once the client has gone."""
    try:
        await response.write(payload)
        return True
    except (ConnectionResetError, RuntimeError):
        return False


def _json_error(status: int, code: str, message: str) -> web.Response:
    return web.json_response({"error": code, "message": message}, status=status)
