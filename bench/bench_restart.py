"""P6: the first turn after a restart, with the primed prefix states kept on disk (not a test).

Per run, through the real agent over a ~3,000-token home prefix (as P1), three first turns of
one command with one prompt (each on a fresh copy of the same home, so nothing but the cache
differs): cold (nothing cached), warm (this process primed the prefix, kept on disk, and the
turn's other states are forgotten: it finds the primed prefix alone), and after a restart (a new
engine and agent on the same data folder, the turn at once, before any priming: it finds the
restored prefix alone). Warm and restart evaluate the same tokens, so their ratio is the cost of
the restart itself. The model file is in the page cache for all three (the previous life read it).
Prints first-token ratios restart / warm (target ≤ 1.5) and restart / cold (target ≤ 0.1).

    python bench/bench_restart.py [--model PATH] [--runs 3]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_cache import BIG_OVERVIEW, Result  # noqa: E402
import bench_cache  # noqa: E402
from hub.agent.types import TurnRequest  # noqa: E402
from hub.llm.types import Usage  # noqa: E402
from tests.perf.agent_rig import RecordingEngine, build_agent, generated_store, restore_only, saved_state  # noqa: E402

COMMAND = "turn off the attic ceiling light"  # resolves to one light: the model turn always runs


class _Life:
    """One hub life: an engine on the data folder `folder`. Only first tokens are measured, so
    each generation stops at its first token."""

    def __init__(self, model: Path, folder: Path) -> None:
        self.engine = RecordingEngine(bench_cache.load(model, state_dir=folder), first_token_only=True)

    async def first_turn(self, conversation: str, *, primed: bool = False) -> Usage:
        """The command's model turn on a fresh copy of the home; when `primed`, after priming its
        prefix (kept on disk) and forgetting every other cached token. Priming takes the prefix
        from the cold turn's state, as the engine does, instead of evaluating it again. Waits for
        the background priming the turn starts."""
        agent, _, _ = build_agent(self.engine, generated_store(BIG_OVERVIEW), overview_max_entities=BIG_OVERVIEW)
        if primed:
            assert await agent.priming.primer.prime_now(), "the engine was busy"
            await self.engine.wait_idle()  # the primed state is on disk too
            prefix = self.engine.engine.prompt_tokens(agent.stable_request(), add_generation_prompt=False)
            await restore_only(self.engine, saved_state(self.engine, prefix))  # the warm turn finds it alone
        await agent.ask(TurnRequest(COMMAND, conversation_id=conversation))
        generations = self.engine.take()
        assert generations, f"{COMMAND!r} did not reach the model"
        await agent.wait_primed()
        await self.engine.wait_idle()
        return generations[0].usage


async def run_all(model: Path, runs: int) -> list[Result]:
    turns: dict[str, list[Usage]] = {"cold": [], "warm": [], "restart": []}
    for run in range(runs):
        with tempfile.TemporaryDirectory() as folder:
            life = _Life(model, Path(folder))
            turns["cold"].append(await life.first_turn(f"c{run}"))
            turns["warm"].append(await life.first_turn(f"w{run}", primed=True))
            await life.engine.close()
            life = _Life(model, Path(folder))  # the restart: nothing evaluated in this process yet
            turns["restart"].append(await life.first_turn(f"r{run}"))
            await life.engine.close()
    seconds = {kind: statistics.median(u.first_token_s for u in usages) for kind, usages in turns.items()}
    evaluated = {kind: "/".join(str(u.evaluated_prompt_tokens) for u in usages) for kind, usages in turns.items()}
    detail = (f"restart {seconds['restart']:.3f} s ({evaluated['restart']} of {turns['cold'][0].prompt_tokens} "
              f"prompt tokens evaluated), warm {seconds['warm']:.3f} s ({evaluated['warm']}), cold "
              f"{seconds['cold']:.2f} s ({evaluated['cold']}), {runs} run(s)")
    return [Result("P6 first token after a restart / a warm turn", seconds["restart"] / seconds["warm"], "≤ 1.5", detail),
            Result("   first token after a restart / a cold turn", seconds["restart"] / seconds["cold"], "≤ 0.1", detail)]


if __name__ == "__main__":
    bench_cache.bench_main(__doc__, run_all)
