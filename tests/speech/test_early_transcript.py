"""A live utterance transcribed from the speaker's pause (real Piper audio, real faster-whisper)."""

from __future__ import annotations

import asyncio
from typing import AsyncIterator

import numpy as np
import pytest
from speech.speech_helpers import ScriptedAgent, as_live, as_recording, normalize_words
from wyoming.asr import Transcript
from wyoming.audio import AudioChunk, AudioStop
from wyoming.event import async_read_event, async_write_event

from hub.interfaces.voice.pipeline import VoicePipeline
from hub.interfaces.voice.events import VoiceDone, VoiceTranscript
from hub.transport.early_transcript import PAUSE_S, LiveTranscript, PauseDetector, transcribe_live
from hub.transport.speech_clients import SpeechError, WyomingSTT, WyomingTTS

pytestmark = pytest.mark.timeout(120)
COMMAND = "Turn on the kitchen light."
END_OF_SPEECH_S = 0.7  # Home Assistant's default end-of-speech silence


async def spoken(tts: WyomingTTS, text: str) -> list[AudioChunk]:
    return [chunk async for chunk in tts.synthesize(text, "en")]


def tone(seconds: float, level: float, rate: int = 16000) -> AudioChunk:
    """A 220 Hz tone at RMS `level` (16-bit)."""
    t = np.arange(int(rate * seconds)) / rate
    samples = (np.sin(2 * np.pi * 220 * t) * level * np.sqrt(2)).astype("<i2")
    return AudioChunk(rate, 2, 1, samples.tobytes())


def quiet(seconds: float, rate: int = 16000) -> AudioChunk:
    return AudioChunk(rate, 2, 1, bytes(int(rate * seconds) * 2))


def test_a_pause_is_silence_after_speech() -> None:
    detector = PauseDetector()
    assert not detector.feed(quiet(1.0)) and not detector.paused  # nothing said yet
    assert detector.feed(tone(0.3, 3000))
    assert not detector.feed(quiet(PAUSE_S / 2)) and not detector.paused
    detector.feed(quiet(PAUSE_S / 2 + 0.01))
    assert detector.paused
    assert detector.feed(tone(0.1, 3000)) and not detector.paused  # the speaker went on


def test_a_soft_ending_is_still_speech_and_hiss_is_not() -> None:
    detector = PauseDetector()
    detector.feed(tone(0.3, 4000))
    assert detector.feed(tone(0.1, 400))  # a soft last syllable, 20 dB under the loudest
    assert not detector.feed(tone(0.3, 100))  # a quiet room's hiss
    assert detector.paused


async def test_the_transcript_is_ready_from_the_pause(tts: WyomingTTS, stt: WyomingSTT) -> None:
    audio = as_recording(await spoken(tts, COMMAND), trail_seconds=END_OF_SPEECH_S)
    transcript = await transcribe_live(stt, as_live(audio), "en")
    assert transcript.early
    assert normalize_words(transcript.text) == normalize_words(COMMAND)


async def test_words_after_a_pause_are_not_lost(tts: WyomingTTS, stt: WyomingSTT) -> None:
    first, second = await spoken(tts, "Turn on the kitchen light."), await spoken(tts, "And the hallway.")
    audio = as_recording([*first, quiet(0.5, first[0].rate), *second], trail_seconds=END_OF_SPEECH_S)
    transcript = await transcribe_live(stt, as_live(audio), "en")
    assert "hallway" in normalize_words(transcript.text), transcript
    assert "kitchen" in normalize_words(transcript.text), transcript


async def test_audio_that_ends_on_a_word_is_transcribed_from_its_end(tts: WyomingTTS, stt: WyomingSTT) -> None:
    audio = as_recording(await spoken(tts, COMMAND), trail_seconds=0.0)
    transcript = await transcribe_live(stt, as_live(audio), "en")
    assert not transcript.early
    assert normalize_words(transcript.text) == normalize_words(COMMAND)


async def test_a_server_that_is_down_is_named_before_the_audio_ends(unused_uri: str) -> None:
    async def endless() -> AsyncIterator[AudioChunk]:  # a microphone that never stops by itself
        while True:
            await asyncio.sleep(0.02)
            yield quiet(0.02)
    with pytest.raises(SpeechError):
        await transcribe_live(WyomingSTT(unused_uri, connect_timeout=2), endless(), "en")


async def test_a_voice_turn_says_its_transcript_came_from_the_pause(tts: WyomingTTS, stt: WyomingSTT) -> None:
    audio = as_recording(await spoken(tts, COMMAND), trail_seconds=END_OF_SPEECH_S)
    agent = ScriptedAgent(["Done."])
    pipeline = VoicePipeline(agent, stt=stt, tts=None)
    events = [event async for event in pipeline.run(as_live(audio), language="en")]
    transcript = next(e for e in events if isinstance(e, VoiceTranscript))
    done = events[-1]
    assert isinstance(done, VoiceDone) and done.timings.stt_early
    assert normalize_words(transcript.text) == normalize_words(COMMAND)
    assert [r.text for r in agent.requests] == [transcript.text]


async def test_an_early_request_that_fails_leaves_the_streamed_one() -> None:
    """A server that drops every connection but the first (the streaming one): the transcript
    still comes, from the stream's end."""
    connections = 0

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        mine = connections
        try:
            while (event := await async_read_event(reader)) is not None:
                if mine > 1:
                    return
                if AudioStop.is_type(event.type):
                    await async_write_event(Transcript(text="from the stream").event(), writer)
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    uri = f"tcp://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    try:
        audio = [tone(0.5, 3000), quiet(END_OF_SPEECH_S)]
        transcript = await transcribe_live(WyomingSTT(uri), as_live(audio), "en")
    finally:
        server.close()
        await server.wait_closed()
    assert connections == 2  # the early request was made
    assert transcript == LiveTranscript("from the stream", early=False)
