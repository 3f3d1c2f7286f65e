"""Every performance ratio of the hub in one run on one model (not a test).

P1 warm/cold first token with another conversation and a state change in between, P2 hub turn /
raw llama-cpp-python turn, P3 prompt tokens per entity / HA GetLiveContext YAML, P4 first token at
1,000 / 25 entities, prompt-lookup speculative decoding on/off, the fast path's share and latency,
P6 first token of the first turn after a restart / a warm turn and / a cold turn, and with `--remote` the OpenAI-compatible engine against the in-process one. Details of each in
bench_cache.py, bench_home_scale.py, bench_restart.py and bench_remote.py. Every part waits for the
agent's background priming before it reaches into the engine, and raw model access goes through
the engine's worker, so the run always reaches its end. Work that no figure measures is not done:
turns measured by their first token stop there, a primed prefix is restored instead of evaluated
again, and steps with the same options share a loaded engine.

    python bench/bench_perf.py [--model PATH] [--runs 3] [--remote]

On a shared machine absolute times swing; the ratios are measured side by side and say more.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_cache  # noqa: E402
import bench_home_scale  # noqa: E402
import bench_remote  # noqa: E402
import bench_restart  # noqa: E402
from bench_cache import print_results  # noqa: E402
from hub.llm.models import gemma3_270m_path  # noqa: E402


async def run_all(model: Path, runs: int, remote: bool) -> None:
    """Each part's figures as soon as it is done (a default run took 19 minutes on 2 cores with a
    load average of 3 to 9; most of it is the cold prefills the ratios are measured against)."""
    parts = [bench_cache.run_all, bench_home_scale.run_all, bench_restart.run_all]
    for part in parts + [bench_remote.run_all] * remote:
        print_results(await part(model, runs))
        sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=None, help="GGUF file (default: Gemma 3 270M)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--remote", action="store_true", help="also the remote engine (starts llama_cpp.server)")
    parser.add_argument("--threads", type=int, default=0, help="llama.cpp threads (0: all cores)")
    args = parser.parse_args()
    bench_cache.THREADS = args.threads
    model = args.model or gemma3_270m_path()
    print(f"model {model.name}, {os.cpu_count()} CPUs, {args.threads or 'all'} llama.cpp threads, "
          f"load average {os.getloadavg()[0]:.1f}")
    asyncio.run(run_all(model, args.runs, args.remote))
    print(f"load average at the end {os.getloadavg()[0]:.1f}: other work on the machine inflates "
          f"absolute times; the ratios were measured side by side")


if __name__ == "__main__":
    main()
