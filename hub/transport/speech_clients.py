"""Wyoming speech-to-text and text-to-speech clients.

Both speak the protocol as Home Assistant does (DESIGN.md §4): STT is `transcribe` +
`audio-start/chunk/stop` → `transcript`; TTS is `synthesize` → `audio-start/chunk/stop`, or, when
the server's `describe` says `supports_synthesize_streaming`, `synthesize-start/-chunk/-stop` →
audio → `synthesize-stopped`. Every connect and read has a timeout, and every way a server can
fail (down, refusing, closing mid-stream, answering `error`, hanging) becomes a `SpeechError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import wave
from dataclasses import dataclass
from typing import AsyncGenerator, AsyncIterable, AsyncIterator, Iterable, TypeVar

import numpy as np
from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioChunkConverter, AudioStart, AudioStop
from wyoming.client import AsyncClient
from wyoming.error import Error
from wyoming.event import Event
from wyoming.info import Describe, Info
from wyoming.tts import (
    Synthesize,
    SynthesizeChunk,
    SynthesizeStart,
    SynthesizeStop,
    SynthesizeStopped,
    SynthesizeVoice,
)


_LOGGER = logging.getLogger(__name__)

T = TypeVar("T")
STT_RATE, STT_WIDTH, STT_CHANNELS = 16000, 2, 1
ADDON_STT_URI = "tcp://core-whisper:10300"
ADDON_TTS_URI = "tcp://core-piper:10200"
# A paragraph break makes a streaming TTS server (Piper's sentence detector among them) speak the
# text it has at once instead of waiting for the next sentence to begin.
STREAM_FLUSH = "\n\n"
_NETWORK_ERRORS = (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError, EOFError)


class SpeechError(Exception):
    """A speech server could not be used. `stage` is "stt" or "tts"; the message says why.

    Users hear the localized phrase `error.speech_unavailable` (see `code`), not this message.
    """

    code = "speech_unavailable"

    def __init__(self, stage: str, message: str) -> None:
        super().__init__(f"{stage.upper()}: {message}")
        self.stage = stage


class AudioInputError(ValueError):
    """Audio the hub was handed cannot be used (bad WAV, impossible format); says what is wrong."""


# --- audio helpers ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PcmFormat:
    rate: int
    width: int
    channels: int

    def check(self) -> "PcmFormat":
        if not 1000 <= self.rate <= 192000:
            raise AudioInputError(f"sample rate {self.rate} Hz is out of range (1000–192000)")
        if self.width not in (1, 2, 3, 4):
            raise AudioInputError(f"sample width {self.width} bytes is not 1, 2, 3 or 4")
        if self.channels not in (1, 2):
            raise AudioInputError(f"{self.channels} channels: only mono or stereo audio is accepted")
        return self

    @property
    def frame_bytes(self) -> int:
        return self.width * self.channels


def parse_wav(data: bytes) -> tuple[PcmFormat, bytes]:
    """The format and PCM frames of a WAV file."""
    try:
        with wave.open(io.BytesIO(data), "rb") as wav:
            fmt = PcmFormat(wav.getframerate(), wav.getsampwidth(), wav.getnchannels())
            frames = wav.readframes(wav.getnframes())
    except (wave.Error, EOFError) as err:
        raise AudioInputError(f"not a PCM WAV file: {err}") from None
    return fmt.check(), frames


def to_wav(fmt: PcmFormat, frames: bytes) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as wav:
        wav.setframerate(fmt.rate)
        wav.setsampwidth(fmt.width)
        wav.setnchannels(fmt.channels)
        wav.writeframes(frames)
    return buffer.getvalue()


def pcm_chunks(fmt: PcmFormat, frames: bytes, seconds_per_chunk: float = 0.1) -> list[AudioChunk]:
    """Whole frames cut into chunks; a trailing partial frame is an input error, not dropped."""
    fmt.check()
    if len(frames) % fmt.frame_bytes:
        raise AudioInputError(
            f"{len(frames)} bytes is not a whole number of {fmt.frame_bytes}-byte frames "
            f"({fmt.width}-byte samples × {fmt.channels} channels)"
        )
    step = max(1, int(fmt.rate * seconds_per_chunk)) * fmt.frame_bytes
    return [
        AudioChunk(fmt.rate, fmt.width, fmt.channels, frames[i : i + step])
        for i in range(0, len(frames), step)
    ]


def chunks_from_audio_bytes(
    data: bytes, fmt: PcmFormat | None = None
) -> list[AudioChunk]:
    """Chunks from a WAV file (recognized by its RIFF header) or raw PCM in `fmt` (default 16 kHz)."""
    if data[:4] == b"RIFF":
        wav_fmt, frames = parse_wav(data)
        return pcm_chunks(wav_fmt, frames)
    return pcm_chunks(fmt or PcmFormat(STT_RATE, STT_WIDTH, STT_CHANNELS), data)


# --- configuration ---------------------------------------------------------------------------


def speech_uris(stt: str | None, tts: str | None, in_addon: bool) -> tuple[str | None, str | None]:
    """(stt_uri, tts_uri): the options, else inside the add-on the official whisper/piper add-ons."""
    if in_addon:
        stt, tts = stt or ADDON_STT_URI, tts or ADDON_TTS_URI
    return stt, tts


def parse_voice_map(text: str | None) -> dict[str, str]:
    """`en:en_US-joe-medium,de:de_DE-thorsten-medium` → {"en": ..., "de": ...}."""
    voices: dict[str, str] = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        language, sep, voice = item.partition(":")
        if not sep or not language.strip() or not voice.strip():
            raise ValueError(f"tts_voices entry {item.strip()!r} is not LANGUAGE:VOICE")
        voices[language.strip().lower()] = voice.strip()
    return voices


def _base_language(code: str) -> str:
    return code.replace("-", "_").split("_")[0].lower()


# --- clients ---------------------------------------------------------------------------------


class _WyomingService:
    """One Wyoming server: connections with timeouts, and its cached `describe` answer."""

    stage = ""

    def __init__(self, uri: str, *, connect_timeout: float = 5.0, read_timeout: float = 30.0) -> None:
        AsyncClient.from_uri(uri)  # rejects a malformed URI now, not at the first turn
        self.uri = uri
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self._info: Info | None = None

    def _error(self, message: str) -> SpeechError:
        self._info = None  # the server may have changed or gone: ask it again next time
        return SpeechError(self.stage, f"{self.uri}: {message}")

    @contextlib.asynccontextmanager
    async def _connection(self) -> AsyncIterator[AsyncClient]:
        client = AsyncClient.from_uri(self.uri, self.connect_timeout, self.read_timeout)
        try:
            await client.connect()
        except _NETWORK_ERRORS as err:
            raise self._error(f"cannot connect ({_describe(err)})") from None
        try:
            yield client
        except _NETWORK_ERRORS as err:
            raise self._error(_describe(err)) from None
        finally:
            with contextlib.suppress(Exception):
                await client.disconnect()

    async def _write(self, client: AsyncClient, event: Event) -> None:
        """Write with a deadline: a server that stops reading must not hang the turn."""
        await asyncio.wait_for(client.write_event(event), self.read_timeout)

    async def _read(self, client: AsyncClient) -> Event:
        event = await client.read_event()
        if event is None:
            raise self._error("the server closed the connection mid-stream")
        if Error.is_type(event.type):
            error = Error.from_event(event)
            code = f" {error.code}" if error.code else ""
            raise self._error(f"the server answered error{code}: {error.text}")
        return event

    async def info(self, refresh: bool = False) -> Info:
        """The server's `describe` answer, cached until a failure or `refresh`."""
        if self._info is not None and not refresh:
            return self._info
        async with self._connection() as client:
            await self._write(client, Describe().event())
            while True:
                event = await self._read(client)
                if Info.is_type(event.type):
                    try:
                        self._info = Info.from_event(event)
                    except (KeyError, TypeError, ValueError) as err:
                        raise self._error(f"unreadable info: {err}") from None
                    return self._info


class WyomingSTT(_WyomingService):
    stage = "stt"

    def __init__(self, uri: str, *, connect_timeout: float = 5.0, read_timeout: float = 60.0) -> None:
        # the transcript comes only after the whole utterance is decoded: allow for a slow CPU
        super().__init__(uri, connect_timeout=connect_timeout, read_timeout=read_timeout)

    async def languages(self) -> list[str]:
        """Languages the server's models transcribe; empty means the server did not say."""
        info = await self.info()
        return sorted({lang for program in info.asr for model in program.models for lang in model.languages})

    async def transcribe(self, audio: AsyncIterable[AudioChunk] | Iterable[AudioChunk], language: str | None) -> str:
        """Send audio (any rate/width/channels; converted to 16 kHz 16-bit mono) and return the text.

        Chunks are forwarded as they arrive, so a live microphone stream is transcribed as soon as
        it stops.
        """
        converter = SttConverter()
        async with self._connection() as client:
            await self._write(client, Transcribe(language=language).event())
            await self._write(client, AudioStart(STT_RATE, STT_WIDTH, STT_CHANNELS).event())
            async for chunk in as_async(audio):
                await self._write(client, converter.convert(chunk).event())
            await self._write(client, AudioStop().event())
            while True:
                event = await self._read(client)
                if Transcript.is_type(event.type):
                    return Transcript.from_event(event).text.strip()


class WyomingTTS(_WyomingService):
    stage = "tts"

    def __init__(self, uri: str, *, voices: dict[str, str] | None = None, connect_timeout: float = 5.0,
                 read_timeout: float = 15.0) -> None:
        super().__init__(uri, connect_timeout=connect_timeout, read_timeout=read_timeout)
        self.voices = {_base_language(k): v for k, v in (voices or {}).items()}

    async def supports_streaming(self) -> bool:
        info = await self.info()
        return any(p.supports_synthesize_streaming for p in info.tts)

    async def languages(self) -> list[str]:
        info = await self.info()
        return sorted({_base_language(lang) for p in info.tts for v in p.voices for lang in v.languages})

    def voice_for(self, language: str | None, voice: str | None = None) -> SynthesizeVoice | None:
        """An explicit voice, else the configured voice for the language, else ask by language."""
        if voice:
            return SynthesizeVoice(name=voice)
        if not language:
            return None
        configured = self.voices.get(_base_language(language))
        return SynthesizeVoice(name=configured) if configured else SynthesizeVoice(language=language)

    async def synthesize(self, text: str, language: str | None = None, voice: str | None = None) -> AsyncIterator[AudioChunk]:
        """One `synthesize` request: the audio of `text`, chunk by chunk."""
        async with self._connection() as client:
            await self._write(client, Synthesize(text=text, voice=self.voice_for(language, voice)).event())
            started = False
            while True:
                event = await self._read(client)
                if AudioStart.is_type(event.type):
                    started = True
                elif AudioChunk.is_type(event.type):
                    yield AudioChunk.from_event(event)
                elif AudioStop.is_type(event.type):
                    if not started:
                        raise self._error("audio-stop without audio-start")
                    return

    async def synthesize_stream(
        self, sentences: AsyncIterable[str], language: str | None = None, voice: str | None = None
    ) -> AsyncGenerator[AudioChunk, None]:
        """Streaming synthesis: each sentence goes out as soon as it is available, and its audio
        comes back while later sentences are still being written. Ends at `synthesize-stopped`."""
        async with self._connection() as client:
            client.read_timeout = None  # timed in _next_event: waiting for our own text is no fault

            async def send() -> None:
                await self._write(client, SynthesizeStart(voice=self.voice_for(language, voice)).event())
                async for sentence in sentences:
                    if sentence.strip():
                        await self._write(client, SynthesizeChunk(text=sentence.strip() + STREAM_FLUSH).event())
                await self._write(client, SynthesizeStop().event())

            sender = asyncio.create_task(send())
            try:
                while True:
                    event = await self._next_event(client, sender)
                    if AudioChunk.is_type(event.type):
                        yield AudioChunk.from_event(event)
                    elif SynthesizeStopped.is_type(event.type):
                        if not sender.done():
                            raise self._error("synthesize-stopped before synthesize-stop")
                        return
            finally:
                if not sender.done():
                    sender.cancel()
                with contextlib.suppress(asyncio.CancelledError, *_NETWORK_ERRORS):
                    await sender

    async def _next_event(self, client: AsyncClient, sender: asyncio.Task[None]) -> Event:
        """The next event. While our text is still streaming there is no read deadline (the turn
        has its own); once `synthesize-stop` is sent, each event must come within `read_timeout`."""
        read = asyncio.ensure_future(self._read(client))
        try:
            while not sender.done():
                await asyncio.wait({read, sender}, return_when=asyncio.FIRST_COMPLETED)
                if read.done():
                    return read.result()
            sender.result()  # the sender's failure (a write to a closed server) is the error
            return await asyncio.wait_for(read, self.read_timeout)
        finally:
            if not read.done():
                read.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await read


class SttConverter:
    """Any PCM → 16 kHz 16-bit mono. Stereo is averaged: the wyoming converter sums the channels,
    which doubles the level of a centred voice and clips it."""

    def __init__(self) -> None:
        self._width = AudioChunkConverter(width=STT_WIDTH)
        self._rest = AudioChunkConverter(rate=STT_RATE, width=STT_WIDTH, channels=STT_CHANNELS)

    def convert(self, chunk: AudioChunk) -> AudioChunk:
        chunk = self._width.convert(chunk)
        if chunk.channels == 2:
            frames = np.frombuffer(chunk.audio, dtype="<i2").reshape(-1, 2).astype(np.int32)
            mono = (frames.sum(axis=1) // 2).astype("<i2").tobytes()
            chunk = AudioChunk(chunk.rate, STT_WIDTH, 1, mono, timestamp=chunk.timestamp)
        return self._rest.convert(chunk)


async def as_async(items: AsyncIterable[T] | Iterable[T]) -> AsyncIterator[T]:
    """`items` one by one, whether they come from an async or a plain iterable."""
    if isinstance(items, AsyncIterable):
        async for item in items:
            yield item
    else:
        for item in items:
            yield item


def _describe(err: BaseException) -> str:
    if isinstance(err, asyncio.TimeoutError):
        return "timed out"
    if isinstance(err, (asyncio.IncompleteReadError, ConnectionResetError, BrokenPipeError)):
        return "the server closed the connection mid-stream"
    return str(err) or type(err).__name__


async def drain(queue: asyncio.Queue[T | None]) -> AsyncIterator[T]:
    """The queue's items until a None."""
    while (item := await queue.get()) is not None:
        yield item
