"""The remote engine against the in-process one, same model, same agent turns (not a test).

Starts llama-cpp-python's OpenAI-compatible server (`python -m llama_cpp.server`, from the
`[server]` extra) on a free loopback port with the same GGUF and runs the same agent turns
through `OpenAIEngine` and through `LlamaEngine`, one after the other (both share this
machine's cores): a free-text turn and a grammar-bound tool-call turn (`response_format` with
the tool-call schema on the server side). Prints remote / local turn time and first token.

A real deployment puts the server on a GPU box, e.g. llama.cpp's own server with a drafter
model for speculative decoding and a reasoning budget:

    llama-server -m bolt-e4b.gguf -md bolt-dflash-drafter.gguf --draft-max 16 --jinja \\
        --reasoning-budget 256 --host 0.0.0.0 --port 8080

and the hub's options `engine: openai`, `remote_url: http://gpu-box:8080/v1`,
`remote_server: llama_server`.

    python bench/bench_remote.py [--model PATH] [--runs 3]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hub.agent.types import TurnRequest  # noqa: E402
from hub.llm.llama_engine import LlamaEngine  # noqa: E402
from hub.llm.openai_engine import OpenAIEngine  # noqa: E402
from tests.perf.agent_rig import RecordingEngine, build_agent, demo_store  # noqa: E402
from tests.perf.remote_server import LlamaCppServer  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_cache  # noqa: E402
from bench_cache import Result  # noqa: E402

TURNS = [("free text", "Tell me a short story about a lighthouse keeper."),
         ("tool call", "turn on the kitchen light")]


async def turn_times(engine: RecordingEngine, runs: int) -> dict[str, tuple[float, float]]:
    """Per turn kind: median (turn seconds, first-token seconds)."""
    agent, _, _ = build_agent(engine, demo_store(), max_tokens=48, constrained_tools="always")
    medians = {}
    for label, text in TURNS:
        await agent.ask(TurnRequest(text, conversation_id=f"warm-{label}"))  # warm caches on both sides
        engine.take()
        totals, firsts = [], []
        for run in range(runs):
            started = time.perf_counter()
            await agent.ask(TurnRequest(text, conversation_id=f"{label}-{run}"))
            totals.append(time.perf_counter() - started)
            firsts.append(engine.take()[0].usage.first_token_s)
        medians[label] = (statistics.median(totals), statistics.median(firsts))
    return medians


async def run_all(model: Path, runs: int) -> list[Result]:
    extra: tuple[str, ...] = ("--chat_format", "gemma") if "gemma" in model.name.lower() else ()
    if bench_cache.THREADS:
        extra += ("--n_threads", str(bench_cache.THREADS), "--n_threads_batch", str(bench_cache.THREADS))
    with tempfile.TemporaryDirectory() as folder:
        server = LlamaCppServer(model, n_ctx=4096, log=Path(folder) / "server.log", extra=extra).wait_ready()
        try:
            remote = RecordingEngine(OpenAIEngine(server.url, constrained_tools="always"))
            remote_times = await turn_times(remote, runs)
            await remote.close()
        finally:
            server.stop()
    local = RecordingEngine(LlamaEngine(model, n_ctx=4096, seed=7, threads=bench_cache.THREADS,
                                        constrained_tools="always"))
    local_times = await turn_times(local, runs)
    await local.close()
    results = []
    for label, _ in TURNS:
        (remote_s, remote_first), (local_s, local_first) = remote_times[label], local_times[label]
        results.append(Result(f"R  remote / in-process turn, {label}", remote_s / local_s, "(info)",
                              f"{remote_s:.2f} s vs {local_s:.2f} s; first token {remote_first:.2f} s vs "
                              f"{local_first:.2f} s"))
    return results


if __name__ == "__main__":
    bench_cache.bench_main(__doc__, run_all)
