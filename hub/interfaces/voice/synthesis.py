"""A reply's audio: its sentences synthesized by the Wyoming TTS server, as voice events.

Three ways to ask the server (`TtsMode`): one streaming-synthesis connection for the whole reply,
one request per sentence with the next ones synthesizing while the current one is passed on, or
the whole reply in one request. The audio comes back in the server's format, converted to the
first chunk's, as start, chunks and stop; a turn that watches (`AudioWatch`) learns the mode,
when the first audio came and how long it all lasts.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import AsyncGenerator, AsyncIterator, Literal, Protocol

from wyoming.audio import AudioChunk, AudioChunkConverter

from hub.interfaces.voice.events import VoiceAudioChunk, VoiceAudioStart, VoiceAudioStop, VoiceEvent
from hub.transport.speech_clients import SpeechError, WyomingTTS

TtsMode = Literal["auto", "stream", "sentences", "whole"]
"""auto: streaming synthesis when the server offers it, else sentences. stream: one streaming
connection. sentences: one request per sentence, pipelined. whole: the complete reply in one
request once the agent is done (no sentence streaming; the baseline the bench compares with)."""


class AudioWatch(Protocol):
    """What a voice turn notes of its reply's audio."""

    def audio_mode(self, mode: TtsMode) -> None: ...

    def audio_started(self) -> None: ...

    def audio_heard(self, seconds: float) -> None: ...


async def audio_events(
    tts: WyomingTTS | None, sentences: AsyncIterator[str], language: str, voice: str | None, mode: TtsMode,
    *, lookahead: int, watch: AudioWatch | None = None,
) -> AsyncIterator[VoiceEvent]:
    """Audio events for the sentences, in order: start, chunks, stop (if any audio came)."""
    if tts is None:
        async for _ in sentences:  # no TTS: nothing to say it with, but the text goes on
            raise SpeechError("tts", "no text-to-speech server is configured (tts_uri)")
        return
    if mode == "auto":
        mode = "stream" if await tts.supports_streaming() else "sentences"
    if watch is not None:
        watch.audio_mode(mode)
    if mode == "stream":
        chunks = tts.synthesize_stream(sentences, language, voice)
    elif mode == "sentences":
        chunks = _pipelined(tts, sentences, language, voice, lookahead)
    else:
        chunks = _whole(tts, sentences, language, voice)
    converter: AudioChunkConverter | None = None
    try:
        async with contextlib.aclosing(chunks):
            async for chunk in chunks:
                if converter is None:
                    converter = AudioChunkConverter(chunk.rate, chunk.width, chunk.channels)
                    if watch is not None:
                        watch.audio_started()
                    yield VoiceAudioStart(chunk.rate, chunk.width, chunk.channels)
                chunk = converter.convert(chunk)
                if watch is not None:
                    watch.audio_heard(chunk.seconds)
                yield VoiceAudioChunk(chunk.audio)
    except SpeechError:
        if converter is not None:
            yield VoiceAudioStop()  # the audio that did come is still a complete stream
        raise
    if converter is not None:
        yield VoiceAudioStop()


async def _pipelined(tts: WyomingTTS, sentences: AsyncIterator[str], language: str, voice: str | None,
                     lookahead: int) -> AsyncGenerator[AudioChunk, None]:
    """One `synthesize` request per sentence; up to `lookahead` later sentences synthesize
    while the current one's audio is being passed on."""
    slots = asyncio.Semaphore(lookahead + 1)
    order: asyncio.Queue[tuple[asyncio.Task[None], asyncio.Queue[AudioChunk | Exception | None]] | None] = \
        asyncio.Queue()
    started: list[asyncio.Task[None]] = []

    async def synthesize(text: str, into: asyncio.Queue[AudioChunk | Exception | None]) -> None:
        try:
            async for chunk in tts.synthesize(text, language, voice):
                into.put_nowait(chunk)
            into.put_nowait(None)
        except Exception as err:
            into.put_nowait(err)

    async def feed() -> None:
        try:
            async for sentence in sentences:
                await slots.acquire()
                into: asyncio.Queue[AudioChunk | Exception | None] = asyncio.Queue()
                task = asyncio.create_task(synthesize(sentence, into))
                started.append(task)
                order.put_nowait((task, into))
        finally:
            order.put_nowait(None)

    feeder = asyncio.create_task(feed())
    try:
        while (item := await order.get()) is not None:
            _, into = item
            try:
                while (chunk := await into.get()) is not None:
                    if isinstance(chunk, Exception):
                        raise chunk
                    yield chunk
            finally:
                slots.release()
        feeder.result()
    finally:
        for task in (feeder, *started):
            task.cancel()
        await asyncio.gather(feeder, *started, return_exceptions=True)


async def _whole(tts: WyomingTTS, sentences: AsyncIterator[str], language: str,
                 voice: str | None) -> AsyncGenerator[AudioChunk, None]:
    text = " ".join([s async for s in sentences])
    if text:
        async for chunk in tts.synthesize(text, language, voice):
            yield chunk
