"""A live utterance transcribed from the speaker's pause, before its audio ends.

A microphone's stream ends a while after the last word: whoever ends it waits for silence first
(Home Assistant's end-of-speech detection 0.7 s by default, 1.25 s relaxed), and a push-to-talk
user lets go a moment after speaking. faster-whisper transcribes only once a stream has ended,
so that wait used to come before the whole STT stage. Here the audio still streams to the
server as it comes, and once the speaker has paused for `PAUSE_S` a second request transcribes
what was said up to then. When the stream ends with nothing but silence after that point, the
early transcript is the transcript (the same words: only silence was left out) and the streaming
request is closed before the server decodes it; speech after the pause drops the early request,
and the next pause starts another.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import AsyncIterable, Iterable

import numpy as np
from wyoming.audio import AudioChunk

from hub.transport.speech_clients import STT_RATE, SttConverter, WyomingSTT, as_async, drain

PAUSE_S = 0.2
"""Silence after speech that starts an early transcription: shorter than any end-of-speech wait,
longer than the gaps between most words."""

FRAME_S = 0.01
MIN_SPEECH_LEVEL = 300.0
"""RMS (16-bit) below which a frame is never speech: about -40 dBFS, above a quiet room's noise."""
PEAK_SHARE = 0.05
"""A frame is speech when its level reaches this share of the loudest frame so far (-26 dB):
a soft last syllable still counts, a microphone's hiss under loud speech does not."""


class PauseDetector:
    """Speech and pauses in 16 kHz 16-bit mono audio, by level, 10 ms at a time."""

    def __init__(self, pause_s: float = PAUSE_S) -> None:
        self.pause_s = pause_s
        self._peak = 0.0
        self._heard = False
        self._silent_s = 0.0

    def feed(self, chunk: AudioChunk) -> bool:
        """Takes the next chunk; whether speech was heard in it."""
        samples = np.frombuffer(chunk.audio, dtype="<i2").astype(np.float32)
        frame = max(1, int(STT_RATE * FRAME_S))
        spoke = False
        for start in range(0, len(samples), frame):
            part = samples[start:start + frame]
            level = float(np.sqrt(np.mean(part * part)))
            self._peak = max(self._peak, level)
            if level >= max(MIN_SPEECH_LEVEL, PEAK_SHARE * self._peak):
                spoke, self._heard, self._silent_s = True, True, 0.0
            else:
                self._silent_s += len(part) / STT_RATE
        return spoke

    @property
    def paused(self) -> bool:
        """Speech was heard and has been followed by at least `pause_s` of silence."""
        return self._heard and self._silent_s >= self.pause_s


@dataclass(frozen=True)
class LiveTranscript:
    text: str
    early: bool  # the early request's: the stream's end added only silence


async def transcribe_live(stt: WyomingSTT, audio: AsyncIterable[AudioChunk] | Iterable[AudioChunk],
                          language: str | None, pause_s: float = PAUSE_S) -> LiveTranscript:
    """The transcript of `audio` (any PCM format), started early at the speaker's pause."""
    converter, detector = SttConverter(), PauseDetector(pause_s)
    heard: list[AudioChunk] = []
    live: asyncio.Queue[AudioChunk | None] = asyncio.Queue()
    streaming = asyncio.create_task(stt.transcribe(drain(live), language))
    early: asyncio.Task[str] | None = None
    try:
        async for chunk in as_async(audio):
            if streaming.done():
                streaming.result()  # the server is down or refused the stream: say so now
            chunk = converter.convert(chunk)
            heard.append(chunk)
            live.put_nowait(chunk)
            if detector.feed(chunk) and early is not None:
                await _cancel(early)  # the speaker went on: that transcript would miss words
                early = None
            if early is None and detector.paused:
                early = asyncio.create_task(stt.transcribe(list(heard), language))
        if early is not None:
            with contextlib.suppress(Exception):  # the streaming request still stands
                text = await early
                await _cancel(streaming)
                return LiveTranscript(text, early=True)
        live.put_nowait(None)
        return LiveTranscript(await streaming, early=False)
    finally:
        for task in (streaming, early):
            if task is not None:
                await _cancel(task)


async def _cancel(task: asyncio.Task[str]) -> None:
    """Ends a request that is no longer wanted; whatever it raised has nothing left to say."""
    task.cancel()
    await asyncio.wait([task])
    if not task.cancelled():
        task.exception()
