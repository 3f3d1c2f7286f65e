"""Wyoming STT/TTS clients against real Piper and faster-whisper, and against servers that fail."""

from __future__ import annotations

import asyncio
import audioop
import io
import wave

import pytest
from speech.speech_helpers import as_recording, breaking_tts_server, normalize_words
from wyoming.audio import AudioChunk
from wyoming.error import Error
from wyoming.event import async_read_event, async_write_event

from hub.config import validate
from hub.options import hub_options
from hub.transport.speech_clients import (
    ADDON_STT_URI,
    ADDON_TTS_URI,
    AudioInputError,
    PcmFormat,
    SpeechError,
    WyomingSTT,
    WyomingTTS,
    chunks_from_audio_bytes,
    parse_voice_map,
    parse_wav,
    pcm_chunks,
    speech_uris,
    to_wav,
)

pytestmark = pytest.mark.timeout(120)
COMMAND = "Turn on the kitchen light."


async def synthesized(tts: WyomingTTS, text: str) -> list[AudioChunk]:
    return [chunk async for chunk in tts.synthesize(text, "en")]


async def test_describe_reports_languages_and_streaming(tts: WyomingTTS, stt: WyomingSTT) -> None:
    assert await tts.supports_streaming()
    assert "en" in await tts.languages()
    assert "en" in await stt.languages()


async def test_piper_audio_round_trips_through_whisper(tts: WyomingTTS, stt: WyomingSTT) -> None:
    chunks = await synthesized(tts, COMMAND)
    assert chunks and chunks[0].rate == 22050  # Piper's own rate: the STT client converts it
    assert normalize_words(await stt.transcribe(as_recording(chunks), "en")) == normalize_words(COMMAND)


async def test_resampled_stereo_wav_is_transcribed(tts: WyomingTTS, stt: WyomingSTT) -> None:
    mono = b"".join(c.audio for c in await synthesized(tts, COMMAND))
    mono = b"".join(c.audio for c in as_recording([AudioChunk(22050, 2, 1, mono)]))
    stereo_wav = to_wav(PcmFormat(22050, 2, 2), audioop.tostereo(mono, 2, 1.0, 1.0))
    chunks = chunks_from_audio_bytes(stereo_wav)
    assert (chunks[0].rate, chunks[0].channels) == (22050, 2)
    assert normalize_words(await stt.transcribe(chunks, "en")) == normalize_words(COMMAND)


async def test_streaming_synthesis_speaks_every_sentence(tts: WyomingTTS, stt: WyomingSTT) -> None:
    sentences = ["The kitchen light is on.", "The door is locked."]

    async def slowly():
        for sentence in sentences:
            yield sentence
            await asyncio.sleep(0.2)

    chunks = [chunk async for chunk in tts.synthesize_stream(slowly(), "en")]
    heard = normalize_words(await stt.transcribe(as_recording(chunks), "en"))
    assert heard == normalize_words(" ".join(sentences))


async def test_tts_that_is_down_is_a_clear_error(unused_uri: str) -> None:
    with pytest.raises(SpeechError, match="cannot connect") as caught:
        await synthesized(WyomingTTS(unused_uri, connect_timeout=2), "Hello.")
    assert caught.value.stage == "tts" and caught.value.code == "speech_unavailable"


async def test_stt_that_is_down_is_a_clear_error(unused_uri: str) -> None:
    chunks = pcm_chunks(PcmFormat(16000, 2, 1), bytes(3200))
    with pytest.raises(SpeechError, match="STT: .*cannot connect"):
        await WyomingSTT(unused_uri, connect_timeout=2).transcribe(chunks, "en")


@pytest.mark.parametrize("streaming", [False, True])
async def test_tts_closing_mid_stream_is_a_clear_error(streaming: bool) -> None:
    async with breaking_tts_server(streaming) as uri:
        tts = WyomingTTS(uri, read_timeout=5)
        assert await tts.supports_streaming() is streaming

        async def one():
            yield "Hello there."

        with pytest.raises(SpeechError, match="closed the connection mid-stream"):
            if streaming:
                [c async for c in tts.synthesize_stream(one(), "en")]
            else:
                await synthesized(tts, "Hello there.")
        assert tts._info is None  # the failure dropped the cached describe answer


async def test_hanging_tts_times_out() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()  # reads everything, answers nothing
        writer.close()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    uri = f"tcp://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    try:
        with pytest.raises(SpeechError, match="timed out"):
            await synthesized(WyomingTTS(uri, read_timeout=0.5), "Hello.")
    finally:
        server.close()
        await server.wait_closed()


def test_bad_audio_input_is_named() -> None:
    with pytest.raises(AudioInputError, match="not a PCM WAV"):
        parse_wav(b"RIFF\x00\x00\x00\x00WAVEjunk")
    with pytest.raises(AudioInputError, match="whole number of 4-byte frames"):
        pcm_chunks(PcmFormat(16000, 2, 2), bytes(4002))
    with pytest.raises(AudioInputError, match="mono or stereo"):
        pcm_chunks(PcmFormat(16000, 2, 6), bytes(12))
    with pytest.raises(AudioInputError, match="sample rate"):
        chunks_from_audio_bytes(bytes(100), PcmFormat(10, 2, 1))


def test_wav_round_trip_keeps_format_and_frames() -> None:
    frames = bytes(range(256)) * 10
    fmt, back = parse_wav(to_wav(PcmFormat(8000, 2, 1), frames))
    assert fmt == PcmFormat(8000, 2, 1) and back == frames
    with wave.open(io.BytesIO(to_wav(fmt, frames))) as wav:
        assert wav.getnframes() == len(frames) // 2


def test_voice_map_and_uris() -> None:
    assert parse_voice_map("en:en_US-joe-medium, de:de_DE-thorsten-medium") == {
        "en": "en_US-joe-medium", "de": "de_DE-thorsten-medium"}
    assert parse_voice_map(None) == {}
    with pytest.raises(ValueError, match="LANGUAGE:VOICE"):
        parse_voice_map("en_US-joe-medium")
    tts = WyomingTTS("tcp://127.0.0.1:1", voices={"de-DE": "de_DE-thorsten-medium"})
    assert tts.voice_for("de").name == "de_DE-thorsten-medium"
    assert tts.voice_for("fr").language == "fr" and tts.voice_for("fr").name is None
    assert tts.voice_for("de", voice="other").name == "other"
    with pytest.raises(ValueError):
        WyomingTTS("http://nowhere")


def test_addon_defaults_find_the_official_addons(monkeypatch: pytest.MonkeyPatch) -> None:
    def uris(options: dict) -> tuple[str | None, str | None]:
        voice = hub_options(validate(options)).voice
        return speech_uris(voice.stt_uri, voice.tts_uri, voice.in_addon)

    monkeypatch.delenv("SUPERVISOR_TOKEN", raising=False)
    assert uris({}) == (None, None)
    monkeypatch.setenv("SUPERVISOR_TOKEN", "x")
    assert uris({}) == (ADDON_STT_URI, ADDON_TTS_URI)
    assert uris({"tts_uri": "tcp://10.0.0.5:10200"})[1] == "tcp://10.0.0.5:10200"


async def test_server_error_event_is_reported() -> None:
    async def refuse(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await async_read_event(reader)
        await async_write_event(Error(text="voice not found", code="VoiceNotFound").event(), writer)
        writer.close()

    server = await asyncio.start_server(refuse, "127.0.0.1", 0)
    uri = f"tcp://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    try:
        with pytest.raises(SpeechError, match="answered error VoiceNotFound: voice not found"):
            await synthesized(WyomingTTS(uri), "Hello.")
    finally:
        server.close()
        await server.wait_closed()
