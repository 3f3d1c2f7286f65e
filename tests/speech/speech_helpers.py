"""Fakes for the speech tests: a TTS server that breaks mid-stream, a scripted agent."""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import time
from typing import AsyncIterator

from wyoming.audio import AudioChunk, AudioStart
from wyoming.event import async_read_event, async_write_event
from wyoming.info import Attribution, Describe, Info, TtsProgram, TtsVoice

from hub.agent.types import ReplyChunk, TurnDone, TurnEvent, TurnRequest, TurnResult


# --- a TTS server that breaks after audio-start -------------------------------------------------


@contextlib.asynccontextmanager
async def breaking_tts_server(streaming: bool) -> AsyncIterator[str]:
    """Answers describe like a TTS server, then closes the connection right after `audio-start`."""
    info = Info(tts=[TtsProgram(
        name="breaking", description="closes mid-stream", version="1", installed=True,
        attribution=Attribution(name="test", url=""), supports_synthesize_streaming=streaming,
        voices=[TtsVoice(name="v", description="v", version="1", installed=True, languages=["en"],
                         attribution=Attribution(name="test", url=""))],
    )])

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while (event := await async_read_event(reader)) is not None:
                if Describe.is_type(event.type):
                    await async_write_event(info.event(), writer)
                elif event.type in ("synthesize", "synthesize-chunk"):
                    await async_write_event(AudioStart(22050, 2, 1).event(), writer)
                    break
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"tcp://127.0.0.1:{port}"
    finally:
        server.close()
        await server.wait_closed()


# --- a scripted agent with the real Agent's run() shape ------------------------------------------


class ScriptedAgent:
    """Streams fixed reply chunks. `pause_after` chunk index waits on `gate` (at most
    `gate_timeout`), so a test can hold the agent mid-reply until it has seen something."""

    def __init__(self, chunks: list[str], *, delay: float = 0.0, pause_after: int | None = None,
                 gate_timeout: float = 20.0, ok: bool = True, error: str | None = None,
                 final_reply: str | None = None) -> None:
        self.chunks = chunks
        self.delay = delay
        self.pause_after = pause_after
        self.gate = asyncio.Event()
        self.gate_timeout = gate_timeout
        self.ok = ok
        self.error = error
        self.final_reply = final_reply
        self.requests: list[TurnRequest] = []
        self.gate_timed_out = False
        self.languages = ["en"]

    def prepare(self, request: TurnRequest) -> None:
        """Told of a voice turn before its words (the real agent primes its prompt then)."""

    async def run(self, request: TurnRequest) -> AsyncIterator[TurnEvent]:
        self.requests.append(request)
        for index, chunk in enumerate(self.chunks):
            await asyncio.sleep(self.delay)
            yield ReplyChunk(chunk)
            if index == self.pause_after:
                try:
                    await asyncio.wait_for(self.gate.wait(), self.gate_timeout)
                except asyncio.TimeoutError:
                    self.gate_timed_out = True
        reply = self.final_reply if self.final_reply is not None else "".join(self.chunks).strip()
        yield TurnDone(TurnResult(request.conversation_id or "c1", request.language or "en", reply,
                                  ok=self.ok, error=self.error))


def normalize_words(text: str) -> str:
    """Lower case, letters, digits and single spaces: how transcripts are compared."""
    kept = "".join(ch.lower() if ch.isalnum() else " " for ch in text)
    return " ".join(kept.split())



def as_recording(chunks: list[AudioChunk], lead_seconds: float = 0.5,
                 trail_seconds: float | None = None) -> list[AudioChunk]:
    """Chunks with silence before and after (`trail_seconds`, default as long as the lead), as a
    microphone records them (tiny.en drops a first word that starts at the very first sample now
    and then)."""
    first = chunks[0]

    def silence(seconds: float) -> AudioChunk:
        return AudioChunk(first.rate, first.width, first.channels,
                          bytes(int(first.rate * seconds) * first.width * first.channels))
    return [silence(lead_seconds), *chunks, silence(lead_seconds if trail_seconds is None else trail_seconds)]


async def as_live(chunks: list[AudioChunk], piece_seconds: float = 0.02) -> AsyncIterator[AudioChunk]:
    """The audio at the pace a microphone delivers it, in pieces of `piece_seconds`."""
    started, sent = time.monotonic(), 0.0
    for chunk in chunks:
        step = max(1, int(chunk.rate * piece_seconds)) * chunk.width * chunk.channels
        for offset in range(0, len(chunk.audio), step):
            piece = AudioChunk(chunk.rate, chunk.width, chunk.channels, chunk.audio[offset:offset + step])
            sent += piece.seconds
            await asyncio.sleep(max(0.0, started + sent - time.monotonic()))
            yield piece


def sounds_like(heard: str, expected: str) -> bool:
    """Whether a transcript is the expected text up to one misheard word that still sounds
    alike: tiny.en turns Piper's "Turned on" into "Perned on" at some offsets. "on" for "off",
    or another sentence, does not pass."""
    heard_words, expected_words = normalize_words(heard).split(), normalize_words(expected).split()
    if len(heard_words) != len(expected_words):
        return False
    different = [(a, b) for a, b in zip(heard_words, expected_words) if a != b]
    return len(different) <= 1 and all(difflib.SequenceMatcher(None, a, b).ratio() >= 0.6 for a, b in different)
