"""What a voice turn streams to its caller (`VoicePipeline.run`), and the timings kept of recent turns."""

from __future__ import annotations

import statistics
from collections import Counter, deque
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Union

from hub.agent.types import TurnResult


@dataclass(frozen=True)
class VoiceTranscript:
    text: str
    language: str


@dataclass(frozen=True)
class VoiceReplyChunk:
    """Reply text as the agent streams it."""

    text: str


@dataclass(frozen=True)
class VoiceSentence:
    """A speakable sentence handed to TTS."""

    text: str


@dataclass(frozen=True)
class VoiceAudioStart:
    rate: int
    width: int
    channels: int


@dataclass(frozen=True)
class VoiceAudioChunk:
    """PCM in the format of the preceding `VoiceAudioStart`."""

    audio: bytes


@dataclass(frozen=True)
class VoiceAudioStop:
    pass


@dataclass(frozen=True)
class VoiceError:
    stage: str  # input | stt | agent | tts
    code: str  # bad_audio | speech_unavailable | generic
    message: str  # localized, for the user
    detail: str  # technical, for logs and developers


@dataclass
class VoiceTimings:
    """Seconds from the end of the input audio (or the start of a text turn) to each stage."""

    stt_s: float | None = None
    stt_early: bool = False  # transcribed from the speaker's pause, before the audio ended
    first_token_s: float | None = None
    first_sentence_s: float | None = None
    first_audio_s: float | None = None
    total_s: float | None = None
    input_audio_s: float = 0.0
    reply_audio_s: float = 0.0
    tts_mode: str = ""


@dataclass(frozen=True)
class VoiceDone:
    ok: bool
    language: str
    transcript: str | None
    reply: str
    error: str | None  # the agent's error code, or a VoiceError code
    timings: VoiceTimings
    result: TurnResult | None = None


VoiceEvent = Union[
    VoiceTranscript, VoiceReplyChunk, VoiceSentence, VoiceAudioStart, VoiceAudioChunk,
    VoiceAudioStop, VoiceError, VoiceDone,
]


class VoiceMetrics:
    """Timings of recent voice turns and error counts, for whoever exposes them (REST, MQTT)."""

    STAGES = ("stt_s", "first_token_s", "first_sentence_s", "first_audio_s", "total_s")

    def __init__(self, keep: int = 50) -> None:
        self.recent: deque[VoiceTimings] = deque(maxlen=keep)
        self.turns = 0
        self.errors: Counter[str] = Counter()

    def record(self, timings: VoiceTimings, error_stages: Iterable[str] = ()) -> None:
        self.turns += 1
        self.recent.append(timings)
        self.errors.update(error_stages)

    def snapshot(self) -> dict[str, Any]:
        medians = {}
        for stage in self.STAGES:
            values = [getattr(t, stage) for t in self.recent if getattr(t, stage) is not None]
            medians[stage] = round(statistics.median(values), 4) if values else None
        return {
            "turns": self.turns,
            "errors": dict(self.errors),
            "last": asdict(self.recent[-1]) if self.recent else None,
            "median": medians,
        }
