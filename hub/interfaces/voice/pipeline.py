"""The hub's own voice turn: audio → STT → agent → speakable sentences → TTS → audio, streamed.

While the audio is transcribed, the agent is told a turn is coming (`prepare`: the model
evaluates the prompt up to the user's words); live audio is transcribed from the speaker's first
pause, while the client still waits for the end of speech (`hub.transport.early_transcript`).
The reply is spoken sentence by sentence while
the agent is still writing it: each of the agent's reply chunks (whole sentences, the first
one from its first clause, split once by its ReplyBuilder) goes to the TTS server as soon as it
arrives (`synthesis`: one streaming-synthesis connection when the server offers it, else one
request per chunk with the next one synthesizing while the current one is sent), and the model
waits while the first one is synthesized (the turn's decode gate: on a shared CPU each slowed
the other, and the next sentence is needed only once the first is heard). Callers get `VoiceEvent`s
in order: the transcript, reply text as it streams, the sentences being spoken, audio
start/chunks/stop, errors, and a final `VoiceDone` with timings.

A failing TTS never costs the text reply: the turn goes on and ends with the reply and the error.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import AsyncIterable, AsyncIterator, Iterable

from wyoming.audio import AudioChunk

from hub.agent.api import AgentApi
from hub.agent.sentences import SentenceSplitter
from hub.agent.speakable import make_speakable
from hub.agent.types import ReplyChunk, TurnDone, TurnRequest, TurnResult
from hub.interfaces.voice.events import (
    VoiceAudioChunk,
    VoiceAudioStart,
    VoiceDone,
    VoiceError,
    VoiceEvent,
    VoiceMetrics,
    VoiceReplyChunk,
    VoiceSentence,
    VoiceTimings,
    VoiceTranscript,
)
from hub.interfaces.voice.synthesis import TtsMode, audio_events
from hub.transport.speech_clients import (
    AudioInputError,
    PcmFormat,
    SpeechError,
    WyomingSTT,
    WyomingTTS,
    as_async,
    drain,
    parse_voice_map,
    speech_uris,
    to_wav,
)
from hub.transport.early_transcript import transcribe_live
from hub.locales import normalize_language, phrase

_LOGGER = logging.getLogger(__name__)

MAX_INPUT_SECONDS = 60.0


@dataclass(frozen=True)
class VoiceOptions:
    stt_uri: str | None
    tts_uri: str | None
    tts_voices: str | None
    language: str
    in_addon: bool  # the add-on finds the official speech add-ons by itself


# --- the pipeline ----------------------------------------------------------------------------


def _open_gate() -> threading.Event:
    gate = threading.Event()
    gate.set()
    return gate


@dataclass
class _Turn:
    """Bookkeeping of one voice turn while its stages run."""

    language: str
    started: float
    timings: VoiceTimings = field(default_factory=VoiceTimings)
    reply_parts: list[str] = field(default_factory=list)
    result: TurnResult | None = None
    errors: list[VoiceError] = field(default_factory=list)
    # the agent's model decodes while this is set: not while the first sentence is synthesized
    decode_gate: threading.Event = field(default_factory=_open_gate)

    def mark(self, stage: str) -> None:
        if getattr(self.timings, stage) is None:
            setattr(self.timings, stage, time.monotonic() - self.started)

    # what it notes of its audio (an AudioWatch)

    def audio_mode(self, mode: TtsMode) -> None:
        self.timings.tts_mode = mode

    def audio_started(self) -> None:
        self.mark("first_audio_s")
        self.decode_gate.set()

    def audio_heard(self, seconds: float) -> None:
        self.timings.reply_audio_s += seconds


class VoicePipeline:
    def __init__(
        self,
        agent: AgentApi | None,
        *,
        stt: WyomingSTT | None,
        tts: WyomingTTS | None,
        default_language: str = "en",
        tts_mode: TtsMode = "auto",
        lookahead: int = 1,
        metrics: VoiceMetrics | None = None,
    ) -> None:
        self.agent = agent
        self.stt = stt
        self.tts = tts
        self.default_language = default_language
        self.tts_mode = tts_mode
        self.lookahead = max(0, lookahead)
        self.metrics = metrics or VoiceMetrics()

    @classmethod
    def from_options(cls, options: VoiceOptions, agent: AgentApi | None) -> "VoicePipeline":
        """`agent` may come later (`pipeline.agent = …`): the hub's HTTP API, and so this
        pipeline's routes, start before the model is loaded and refuse requests until then."""
        stt_uri, tts_uri = speech_uris(options.stt_uri, options.tts_uri, options.in_addon)
        voices = parse_voice_map(options.tts_voices)  # a mistake here is reported even without TTS
        return cls(
            agent,
            stt=WyomingSTT(stt_uri) if stt_uri else None,
            tts=WyomingTTS(tts_uri, voices=voices) if tts_uri else None,
            default_language=options.language,
        )

    # --- public API ---------------------------------------------------------------------------

    async def run(
        self,
        audio: AsyncIterable[AudioChunk] | Iterable[AudioChunk],
        *,
        language: str | None = None,
        conversation_id: str | None = None,
        voice: str | None = None,
        source: str = "voice",
        satellite_id: str | None = None,
        device_id: str | None = None,
        area: str | None = None,
        persona: str | None = None,
    ) -> AsyncIterator[VoiceEvent]:
        """One voice turn from audio in any PCM format; the last event is always `VoiceDone`."""
        lang = normalize_language(language, self.default_language)
        turn = _Turn(lang, time.monotonic())
        request = TurnRequest(text="", conversation_id=conversation_id, language=lang, source=source,
                              satellite_id=satellite_id, device_id=device_id, area=area, persona=persona,
                              decode_gate=self._gate_for(turn))
        try:
            if self.stt is None:
                raise SpeechError("stt", "no speech-to-text server is configured (stt_uri)")
            if self.agent is not None:
                self.agent.prepare(request)  # the model evaluates what the prompt holds before the words
            transcript = await transcribe_live(self.stt, self._timed_input(audio, turn), lang)
        except (SpeechError, AudioInputError) as err:
            stage, code = ("stt", SpeechError.code) if isinstance(err, SpeechError) else ("input", "bad_audio")
            key = "error.speech_unavailable" if stage == "stt" else "error.generic"
            error = VoiceError(stage, code, phrase(lang, key), str(err))
            _LOGGER.warning("voice turn: %s", err)
            turn.errors.append(error)
            yield error
            # say the failure out loud when TTS works, so a push-to-talk user hears it
            async for event in self._spoken(turn, _one_reply(error.message), voice):
                yield event
            yield self._done(turn, transcript=None)
            return
        turn.mark("stt_s")
        turn.timings.stt_early = transcript.early
        text = transcript.text
        yield VoiceTranscript(text, lang)
        request = dataclasses.replace(request, text=text)
        async for event in self._spoken(turn, self._agent_events(request, turn), voice):
            yield event
        yield self._done(turn, transcript=text)

    async def respond(
        self, text: str, *, language: str | None = None, conversation_id: str | None = None,
        voice: str | None = None, source: str = "voice", persona: str | None = None,
    ) -> AsyncIterator[VoiceEvent]:
        """A typed turn with a spoken reply: the same pipeline from the agent on."""
        lang = normalize_language(language, self.default_language)
        turn = _Turn(lang, time.monotonic())
        request = TurnRequest(text=text, conversation_id=conversation_id, language=lang, source=source,
                              persona=persona, decode_gate=self._gate_for(turn))
        async for event in self._spoken(turn, self._agent_events(request, turn), voice):
            yield event
        yield self._done(turn, transcript=None)

    async def speak_to_wav(self, text: str, language: str | None = None, voice: str | None = None) -> bytes:
        """`text` spoken as one WAV file (for "say this" triggers). Raises SpeechError, ValueError."""
        lang = normalize_language(language, self.default_language)
        sentences = _speakable_sentences(text, lang)
        if not sentences:
            raise ValueError("nothing speakable in the text")
        frames: list[bytes] = []
        fmt: PcmFormat | None = None
        mode: TtsMode = "whole" if self.tts_mode == "whole" else "sentences"
        async for event in audio_events(self.tts, as_async(sentences), lang, voice, mode, lookahead=self.lookahead):
            if isinstance(event, VoiceAudioStart):
                fmt = PcmFormat(event.rate, event.width, event.channels)
            elif isinstance(event, VoiceAudioChunk):
                frames.append(event.audio)
        if fmt is None:
            raise SpeechError("tts", "the server sent no audio")
        return to_wav(fmt, b"".join(frames))

    # --- stages -------------------------------------------------------------------------------

    def _gate_for(self, turn: _Turn) -> threading.Event | None:
        """The turn's decode gate when its reply is synthesized while the model writes it."""
        return turn.decode_gate if self.tts is not None and self.tts_mode != "whole" else None

    async def _timed_input(
        self, audio: AsyncIterable[AudioChunk] | Iterable[AudioChunk], turn: _Turn
    ) -> AsyncIterator[AudioChunk]:
        """Passes the input through; counts its length and sets the turn's clock to its end."""
        async for chunk in as_async(audio):
            turn.timings.input_audio_s += chunk.seconds
            if turn.timings.input_audio_s > MAX_INPUT_SECONDS:
                raise AudioInputError(f"the audio is longer than {MAX_INPUT_SECONDS:.0f} seconds")
            yield chunk
        turn.started = time.monotonic()

    async def _agent_events(self, request: TurnRequest, turn: _Turn) -> AsyncIterator[str | VoiceEvent]:
        """Reply text (str) as it streams, plus events to pass on; records the turn's result."""
        streamed = False
        assert self.agent is not None, "the hub's HTTP API refuses requests until the agent is there"
        try:
            async with contextlib.aclosing(self.agent.run(request)) as events:
                async for event in events:
                    if isinstance(event, ReplyChunk) and event.text:
                        streamed = True
                        turn.mark("first_token_s")
                        yield event.text
                    elif isinstance(event, TurnDone):
                        turn.result = event.result
        except Exception as err:  # the agent promises not to raise; a bug must not kill the turn
            _LOGGER.exception("agent failed during a voice turn")
            error = VoiceError("agent", "generic", phrase(turn.language, "error.generic"), repr(err))
            turn.errors.append(error)
            yield error
            yield error.message
            return
        result = turn.result
        assert result is not None, "Agent.run ends every turn with TurnDone"
        spoken = " ".join(turn.reply_parts)
        # a turn that streamed nothing (fast failure) or failed after streaming: speak its reply
        if result.reply and (not streamed or (not result.ok and result.reply.strip() not in spoken)):
            turn.mark("first_token_s")
            yield (" " if streamed else "") + result.reply

    async def _spoken(
        self, turn: _Turn, reply: AsyncIterator[str | VoiceEvent], voice: str | None
    ) -> AsyncIterator[VoiceEvent]:
        """Runs the reply source and TTS side by side and yields their events in arrival order."""
        out: asyncio.Queue[VoiceEvent | None] = asyncio.Queue()
        sentences: asyncio.Queue[str | None] = asyncio.Queue()

        async def read_reply() -> None:
            try:
                async for item in reply:
                    if isinstance(item, str):
                        sentence = item.strip()  # the agent's chunks end on sentence (or first-clause) boundaries
                        turn.reply_parts.append(sentence)
                        out.put_nowait(VoiceReplyChunk(item))
                        if sentence:
                            if turn.timings.first_sentence_s is None:
                                turn.decode_gate.clear()  # until its audio starts (audio_started)
                            turn.mark("first_sentence_s")
                            out.put_nowait(VoiceSentence(sentence))
                            sentences.put_nowait(sentence)
                    else:
                        out.put_nowait(item)
            finally:
                sentences.put_nowait(None)
                out.put_nowait(None)

        async def speak() -> None:
            try:
                async for event in audio_events(self.tts, drain(sentences), turn.language, voice, self.tts_mode,
                                                lookahead=self.lookahead, watch=turn):
                    out.put_nowait(event)
            except SpeechError as err:
                _LOGGER.warning("voice turn: %s", err)
                error = VoiceError("tts", err.code, phrase(turn.language, "error.speech_unavailable"), str(err))
                turn.errors.append(error)
                out.put_nowait(error)
            finally:
                turn.decode_gate.set()  # no audio is coming: nothing to give way to
                out.put_nowait(None)

        tasks = [asyncio.create_task(read_reply()), asyncio.create_task(speak())]
        try:
            running = len(tasks)
            while running:
                event = await out.get()
                if event is None:
                    running -= 1
                else:
                    yield event
            for task in tasks:
                task.result()  # a bug in either stage surfaces here rather than vanishing
        finally:
            turn.decode_gate.set()  # whatever happened to the audio, the model may write on
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    def _done(self, turn: _Turn, transcript: str | None) -> VoiceDone:
        turn.timings.total_s = time.monotonic() - turn.started
        self.metrics.record(turn.timings, [e.stage for e in turn.errors])
        result = turn.result
        error = (turn.errors[0].code if turn.errors else None) or (result.error if result else None)
        ok = not turn.errors and result is not None and result.ok
        reply = result.reply if result is not None else " ".join(turn.reply_parts)
        return VoiceDone(ok, turn.language, transcript, reply, error, turn.timings, result)


def _speakable_sentences(text: str, language: str) -> list[str]:
    splitter = SentenceSplitter(language)
    found = splitter.feed(text) + splitter.flush()
    return [s for s in (make_speakable(x, language) for x in found) if s]


async def _one_reply(text: str) -> AsyncIterator[str]:
    yield text

