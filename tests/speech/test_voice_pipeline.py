"""Voice turns through real Piper and faster-whisper, with a scripted agent that streams slowly."""

from __future__ import annotations

import asyncio
from typing import AsyncIterator

import pytest
from speech.speech_helpers import ScriptedAgent, as_recording, breaking_tts_server, normalize_words
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
from hub.agent.agent import Agent
from hub.agent.types import ReplyChunk, TurnDone, TurnEvent, TurnRequest, TurnResult
from hub.config import validate
from hub.core.tools import ToolRegistry
from hub.llm.types import Done, GenerationRequest, ModelInfo, TextDelta, Usage
from hub.options import hub_options
from hub.settings import RuntimeSettings
from hub.transport.speech_clients import PcmFormat, WyomingSTT, WyomingTTS, parse_wav
from hub.locales import phrase

pytestmark = pytest.mark.timeout(180)
COMMAND = "Turn on the kitchen light."
REPLY = ["The kitchen light is now on.", " The hallway light is off.", " Anything else?"]


@pytest.fixture(params=["stream", "sentences"])
def mode_uri(request: pytest.FixtureRequest) -> tuple[str, str]:
    """(expected TTS mode, Piper URI): Piper with streaming synthesis, and Piper without it."""
    fixture = "piper_uri" if request.param == "stream" else "piper_plain_uri"
    return request.param, request.getfixturevalue(fixture)


@pytest.fixture
async def command_audio(tts: WyomingTTS) -> list[AudioChunk]:
    return as_recording([chunk async for chunk in tts.synthesize(COMMAND, "en")])


async def collect(events: AsyncIterator[VoiceEvent], agent: ScriptedAgent | None = None) -> list[VoiceEvent]:
    """All events; the agent's gate opens at the first audio chunk."""
    seen = []
    async for event in events:
        seen.append(event)
        if agent is not None and isinstance(event, VoiceAudioChunk):
            agent.gate.set()
    return seen


def audio_of(events: list[VoiceEvent]) -> list[AudioChunk]:
    start = next(e for e in events if isinstance(e, VoiceAudioStart))
    return [AudioChunk(start.rate, start.width, start.channels, e.audio) for e in events if isinstance(e, VoiceAudioChunk)]


def of_type(events: list[VoiceEvent], kind: type) -> list:
    return [e for e in events if isinstance(e, kind)]


async def test_voice_turn_round_trip(mode_uri: tuple[str, str], stt: WyomingSTT, command_audio: list[AudioChunk]) -> None:
    mode, uri = mode_uri
    agent = ScriptedAgent(REPLY, delay=0.05)
    pipeline = VoicePipeline(agent, stt=stt, tts=WyomingTTS(uri))
    events = await collect(pipeline.run(command_audio, language="en-US", conversation_id="kitchen"))

    transcript = of_type(events, VoiceTranscript)
    assert len(transcript) == 1 and normalize_words(transcript[0].text) == normalize_words(COMMAND)
    request = agent.requests[0]
    assert (request.text, request.language, request.conversation_id, request.source) == (
        transcript[0].text, "en", "kitchen", "voice")
    assert "".join(e.text for e in of_type(events, VoiceReplyChunk)) == "".join(REPLY)
    assert [e.text for e in of_type(events, VoiceSentence)] == [s.strip() for s in REPLY]
    assert isinstance(events[-1], VoiceDone) and events[-1].ok and not of_type(events, VoiceError)
    assert sum(isinstance(e, VoiceAudioStart) for e in events) == 1
    assert isinstance(events[-2], VoiceAudioStop)

    heard = await stt.transcribe(as_recording(audio_of(events)), "en")
    assert normalize_words(heard) == normalize_words("".join(REPLY))

    timings = events[-1].timings
    assert timings.tts_mode == mode
    assert 0 <= timings.stt_s <= timings.first_token_s <= timings.first_sentence_s <= timings.first_audio_s <= timings.total_s
    assert timings.input_audio_s > 1 and timings.reply_audio_s > 1
    snapshot = pipeline.metrics.snapshot()
    assert snapshot["turns"] == 1 and snapshot["last"]["tts_mode"] == mode


async def test_first_audio_leaves_before_the_agent_finishes(mode_uri: tuple[str, str]) -> None:
    """The agent holds its second sentence until audio of the first came out of the pipeline
    (or 20 s pass): audio must not wait for the whole reply."""
    _, uri = mode_uri
    agent = ScriptedAgent(REPLY, pause_after=0, gate_timeout=20)
    pipeline = VoicePipeline(agent, stt=None, tts=WyomingTTS(uri))
    events = await collect(pipeline.respond("Turn on the kitchen light.", language="en"), agent)

    first_audio = next(i for i, e in enumerate(events) if isinstance(e, VoiceAudioChunk))
    last_text = max(i for i, e in enumerate(events) if isinstance(e, VoiceReplyChunk))
    assert first_audio < last_text
    assert not agent.gate_timed_out
    assert events[-1].ok


class HeldEngine:
    """Writes a story token by token and holds the rest of its first sentence after the first
    clause until `gate` opens (at most `gate_timeout`)."""

    def __init__(self, gate_timeout: float = 20.0) -> None:
        self.info = ModelInfo("held", "held", "", 4096, 4096, 10_000_000_000)
        self.uses_constrained_tools = False
        self.gate = asyncio.Event()
        self.gate_timeout = gate_timeout
        self.gate_timed_out = False

    async def stream(self, request: GenerationRequest) -> AsyncIterator[TextDelta | Done]:
        for token in ("Once", " upon", " a", " time", ",", " a"):
            yield TextDelta(token)
        try:
            await asyncio.wait_for(self.gate.wait(), self.gate_timeout)
        except asyncio.TimeoutError:
            self.gate_timed_out = True
        for token in (" keeper", " lived", " by", " the", " sea", "."):
            yield TextDelta(token)
        yield Done(Usage(completion_tokens=12))

    def count_tokens(self, text: str) -> int:
        return len(text.split())


async def test_a_long_first_sentence_is_spoken_from_its_first_clause(tts: WyomingTTS) -> None:
    """The real agent's reply path: the first clause goes to Piper while the model is still
    writing the first sentence (held until audio came out; 20 s if nothing comes)."""
    engine = HeldEngine()
    config = validate({"fast_path": False})
    agent = Agent(engine=engine, registry=ToolRegistry(), settings=RuntimeSettings(hub_options(config).settings),
                  options=hub_options(config).agent)
    pipeline = VoicePipeline(agent, stt=None, tts=tts)
    events = []
    async for event in pipeline.respond("Tell me a story.", language="en"):
        events.append(event)
        if isinstance(event, VoiceAudioChunk):
            engine.gate.set()
    assert [e.text for e in of_type(events, VoiceSentence)] == ["Once upon a time,", "a keeper lived by the sea."]
    assert not engine.gate_timed_out
    assert events[-1].ok and events[-1].reply == "Once upon a time, a keeper lived by the sea."


async def test_tts_down_still_delivers_the_text_reply(stt: WyomingSTT, unused_uri: str,
                                                      command_audio: list[AudioChunk]) -> None:
    agent = ScriptedAgent(REPLY)
    pipeline = VoicePipeline(agent, stt=stt, tts=WyomingTTS(unused_uri, connect_timeout=2))
    events = await collect(pipeline.run(command_audio, language="en"))

    assert "".join(e.text for e in of_type(events, VoiceReplyChunk)) == "".join(REPLY)
    [error] = of_type(events, VoiceError)
    assert (error.stage, error.code) == ("tts", "speech_unavailable")
    assert error.message == phrase("en", "error.speech_unavailable") and "cannot connect" in error.detail
    assert not of_type(events, VoiceAudioStart)
    done = events[-1]
    assert isinstance(done, VoiceDone) and not done.ok and done.error == "speech_unavailable"
    assert done.reply == "".join(REPLY).strip() and normalize_words(done.transcript) == normalize_words(COMMAND)
    assert pipeline.metrics.snapshot()["errors"] == {"tts": 1}


@pytest.mark.parametrize("streaming", [True, False])
async def test_tts_closing_mid_stream_still_delivers_the_text_reply(streaming: bool) -> None:
    agent = ScriptedAgent(REPLY, delay=0.05)
    async with breaking_tts_server(streaming) as uri:
        pipeline = VoicePipeline(agent, stt=None, tts=WyomingTTS(uri, read_timeout=5))
        events = await collect(pipeline.respond("hello", language="en"))
    [error] = of_type(events, VoiceError)
    assert error.stage == "tts" and "closed the connection mid-stream" in error.detail
    assert "".join(e.text for e in of_type(events, VoiceReplyChunk)) == "".join(REPLY)
    assert not events[-1].ok and events[-1].reply == "".join(REPLY).strip()


async def test_stt_down_is_a_clear_error_spoken_when_tts_works(unused_uri: str, tts: WyomingTTS,
                                                               stt: WyomingSTT) -> None:
    agent = ScriptedAgent(REPLY)
    pipeline = VoicePipeline(agent, stt=WyomingSTT(unused_uri, connect_timeout=2), tts=tts)
    audio = [AudioChunk(16000, 2, 1, bytes(3200))]
    events = await collect(pipeline.run(audio, language="en"))

    assert isinstance(events[0], VoiceError)
    assert (events[0].stage, events[0].code) == ("stt", "speech_unavailable") and "cannot connect" in events[0].detail
    assert not agent.requests and not of_type(events, VoiceTranscript)
    done = events[-1]
    assert not done.ok and done.error == "speech_unavailable" and done.transcript is None
    heard = await stt.transcribe(as_recording(audio_of(events)), "en")
    assert normalize_words(heard) == normalize_words(phrase("en", "error.speech_unavailable"))


async def test_stt_and_tts_down_end_with_errors_not_a_hang(unused_uri: str) -> None:
    pipeline = VoicePipeline(ScriptedAgent(REPLY), stt=WyomingSTT(unused_uri, connect_timeout=2),
                             tts=WyomingTTS(unused_uri, connect_timeout=2))
    events = await collect(pipeline.run([AudioChunk(16000, 2, 1, bytes(320))], language="de"))
    assert [e.stage for e in of_type(events, VoiceError)] == ["stt", "tts"]
    assert events[0].message == phrase("de", "error.speech_unavailable")
    assert isinstance(events[-1], VoiceDone) and not events[-1].ok


async def test_bad_or_overlong_input_is_named(stt: WyomingSTT) -> None:
    pipeline = VoicePipeline(ScriptedAgent(REPLY), stt=stt, tts=None)

    async def overlong():
        second = AudioChunk(16000, 2, 1, bytes(32000))
        for _ in range(int(MAX_INPUT_SECONDS) + 2):
            yield second

    events = await collect(pipeline.run(overlong(), language="en"))
    assert events[0].stage == "input" and events[0].code == "bad_audio" and "longer than" in events[0].detail
    assert not events[-1].ok


async def test_failed_turn_speaks_the_agent_error(tts: WyomingTTS, stt: WyomingSTT) -> None:
    """A turn that fails without streaming text (here a timeout) still says why."""
    spoken_error = phrase("en", "error.timeout")
    agent = ScriptedAgent([], ok=False, error="timeout", final_reply=spoken_error)
    pipeline = VoicePipeline(agent, stt=stt, tts=tts)
    events = await collect(pipeline.respond("hello", language="en"))
    assert [e.text for e in of_type(events, VoiceReplyChunk)] == [spoken_error]
    done = events[-1]
    assert not done.ok and done.error == "timeout" and done.result.error == "timeout"
    heard = await stt.transcribe(as_recording(audio_of(events)), "en")
    assert normalize_words(heard) == normalize_words(spoken_error)


async def test_speak_to_wav(tts: WyomingTTS, stt: WyomingSTT) -> None:
    pipeline = VoicePipeline(ScriptedAgent([]), stt=None, tts=tts)
    wav = await pipeline.speak_to_wav("The **washing machine** is done. Please empty it!", "en")
    fmt, frames = parse_wav(wav)
    assert fmt == PcmFormat(22050, 2, 1) and len(frames) > fmt.rate  # over a second of speech
    chunks = [AudioChunk(fmt.rate, fmt.width, fmt.channels, frames)]
    heard = await stt.transcribe(as_recording(chunks), "en")
    assert normalize_words(heard) == "the washing machine is done please empty it"
    with pytest.raises(ValueError, match="nothing speakable"):
        await pipeline.speak_to_wav("  ", "en")


class RecordingTTS:
    """Logs when each sentence's synthesis starts and ends (unit logic of the pipelining only;
    the real-Piper tests above cover the audio)."""

    def __init__(self) -> None:
        self.log: list[tuple[str, str]] = []

    async def supports_streaming(self) -> bool:
        return False

    async def synthesize(self, text: str, language: str | None = None, voice: str | None = None):
        self.log.append(("start", text))
        for _ in range(3):
            await asyncio.sleep(0.01)
            yield AudioChunk(16000, 2, 1, bytes(320))
        self.log.append(("end", text))


@pytest.mark.parametrize("lookahead", [0, 1])
async def test_next_sentence_synthesizes_while_the_current_one_is_sent(lookahead: int) -> None:
    tts = RecordingTTS()
    pipeline = VoicePipeline(ScriptedAgent(REPLY), stt=None, tts=tts, lookahead=lookahead)  # type: ignore[arg-type]
    events = await collect(pipeline.respond("hi", language="en"))
    assert len(of_type(events, VoiceAudioChunk)) == 9 and events[-1].ok
    first, second = REPLY[0].strip(), REPLY[1].strip()
    overlapped = tts.log.index(("start", second)) < tts.log.index(("end", first))
    assert overlapped is bool(lookahead)


def test_pipeline_from_options() -> None:
    config = validate({"stt_uri": "tcp://127.0.0.1:10300", "tts_uri": "tcp://127.0.0.1:10200",
                       "tts_voices": "en:en_US-joe-medium,de:de_DE-thorsten-medium", "language": "de"})
    pipeline = VoicePipeline.from_options(hub_options(config).voice, ScriptedAgent(REPLY))
    assert pipeline.stt.uri == "tcp://127.0.0.1:10300" and pipeline.tts.uri == "tcp://127.0.0.1:10200"
    assert pipeline.tts.voice_for("de").name == "de_DE-thorsten-medium"
    assert pipeline.default_language == "de"
    with pytest.raises(ValueError, match="LANGUAGE:VOICE"):
        VoicePipeline.from_options(hub_options(validate({"tts_voices": "thorsten"})).voice, ScriptedAgent(REPLY))


async def test_unconfigured_speech_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SUPERVISOR_TOKEN", raising=False)
    agent = ScriptedAgent(REPLY)
    pipeline = VoicePipeline.from_options(hub_options(validate({})).voice, agent)
    events = await collect(pipeline.run([AudioChunk(16000, 2, 1, bytes(320))]))
    assert "no speech-to-text server is configured" in events[0].detail
    events = await collect(pipeline.respond("hello"))
    [error] = of_type(events, VoiceError)
    assert "no text-to-speech server is configured" in error.detail
    assert events[-1].reply == "".join(REPLY).strip()


class GateWatchingAgent:
    """Writes two sentences; after the first it notes whether the model could decode on, then
    waits for the gate the way the engine's worker does."""

    def __init__(self) -> None:
        self.languages = ["en"]
        self.gate_after_first: bool | None = None
        self.opened = False

    def prepare(self, request: TurnRequest) -> None:
        pass

    async def run(self, request: TurnRequest) -> AsyncIterator[TurnEvent]:
        gate = request.decode_gate
        assert gate is not None
        yield ReplyChunk("The kitchen light is on.")
        self.gate_after_first = gate.is_set()
        self.opened = await asyncio.to_thread(gate.wait, 20)
        yield ReplyChunk(" The hallway is dark.")
        yield TurnDone(TurnResult("c1", "en", "The kitchen light is on. The hallway is dark."))


@pytest.mark.parametrize("mode", ["stream", "sentences"])
async def test_the_model_waits_for_the_first_sentences_audio(mode: str, piper_uri: str) -> None:
    """On a CPU shared with the TTS server, decoding on would slow the first sentence's synthesis."""
    agent = GateWatchingAgent()
    pipeline = VoicePipeline(agent, stt=None, tts=WyomingTTS(piper_uri), tts_mode=mode)
    events = await collect(pipeline.respond("how is the house?", language="en"))
    assert agent.gate_after_first is False and agent.opened
    first_audio = next(i for i, e in enumerate(events) if isinstance(e, VoiceAudioStart))
    second_reply = [i for i, e in enumerate(events) if isinstance(e, VoiceReplyChunk)][1]
    assert first_audio < second_reply
    assert of_type(events, VoiceDone)[0].ok


async def test_a_reply_synthesized_whole_is_not_held(piper_uri: str) -> None:
    requests: list[TurnRequest] = []

    class Recording(ScriptedAgent):
        async def run(self, request: TurnRequest) -> AsyncIterator[TurnEvent]:
            requests.append(request)
            async for event in super().run(request):
                yield event

    pipeline = VoicePipeline(Recording(["Done."]), stt=None, tts=WyomingTTS(piper_uri), tts_mode="whole")
    await collect(pipeline.respond("hi", language="en"))
    assert requests[0].decode_gate is None
