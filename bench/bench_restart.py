"""P6: the first turn after a restart, with the primed prefix states kept on disk (not a test).

Per run, through the real agent over a ~3,000-token home prefix (as P1): a cold first turn (no
saved state, nothing primed), then the hub primes its prefix (kept on disk) and stops; a new
engine and agent start on the same data folder and the first turn arrives at once (before any
priming); then a warm turn (a new conversation on the primed prefix). Prints first-token ratios
restart / warm (target ≤ 1.5) and restart / cold (target ≤ 0.1).

    python bench/bench_restart.py [--model PATH] [--runs 3]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_cache import BIG_OVERVIEW, N_CTX, Result  # noqa: E402
import bench_cache  # noqa: E402
from hub.agent.types import TurnRequest  # noqa: E402
from hub.llm.llama_engine import LlamaEngine  # noqa: E402
from tests.perf.agent_rig import RecordingEngine, build_agent, generated_store  # noqa: E402


class _Hub:
    """One hub life: an engine on `folder` and the real agent over the same generated home."""

    def __init__(self, model: Path, folder: Path) -> None:
        self.engine = RecordingEngine(LlamaEngine(model, n_ctx=N_CTX, seed=7, threads=bench_cache.THREADS,
                                                  state_dir=folder))
        self.agent, _, _ = build_agent(self.engine, generated_store(BIG_OVERVIEW),
                                       overview_max_entities=BIG_OVERVIEW)

    async def first_token(self, text: str, conversation: str) -> tuple[float, int, int]:
        await self.agent.ask(TurnRequest(text, conversation_id=conversation))
        usage = self.engine.take()[0].usage
        await self.agent.wait_primed()
        await self.engine.wait_idle()
        return usage.first_token_s, usage.evaluated_prompt_tokens, usage.prompt_tokens

    async def prime(self) -> None:
        assert await self.agent.primer.prime_now(), "the engine was busy"
        await self.engine.wait_idle()  # the primed state is on disk too


async def run_all(model: Path, runs: int) -> list[Result]:
    cold, restart, warm, evaluated = [], [], [], {}
    for run in range(runs):
        with tempfile.TemporaryDirectory() as folder:
            first = _Hub(model, Path(folder))
            seconds, evaluated["cold"], prompt = await first.first_token("turn on the kitchen ceiling light", f"c{run}")
            cold.append(seconds)
            await first.prime()
            await first.engine.close()
            again = _Hub(model, Path(folder))  # the restart: nothing evaluated in this process yet
            seconds, evaluated["restart"], _ = await again.first_token("switch off the garage corner lamp", f"r{run}")
            restart.append(seconds)
            await again.prime()
            seconds, evaluated["warm"], _ = await again.first_token("and the attic ceiling light", f"w{run}")
            warm.append(seconds)
            await again.engine.close()
    cold_s, restart_s, warm_s = (statistics.median(v) for v in (cold, restart, warm))
    detail = (f"restart {restart_s:.3f} s ({evaluated['restart']} of {prompt} prompt tokens evaluated), warm "
              f"{warm_s:.3f} s ({evaluated['warm']}), cold {cold_s:.2f} s ({evaluated['cold']}), {runs} run(s)")
    return [Result("P6 first token after a restart / a warm turn", restart_s / warm_s, "≤ 1.5", detail),
            Result("   first token after a restart / a cold turn", restart_s / cold_s, "≤ 0.1", detail)]


if __name__ == "__main__":
    bench_cache.bench_main(__doc__, run_all)
