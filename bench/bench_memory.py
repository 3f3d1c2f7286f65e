"""Memory bench against `python -m hub serve`: what its RSS is made of, against `bolt-hub check`'s
estimate, and whether it stays flat (issue #43 point 1-2; issue #30).

  --split (the default): for each configuration (SmolLM2 and Gemma 3 270M at the default n_ctx,
      SmolLM2 at n_ctx 2048; or --model and --n-ctx), `bolt-hub check`'s estimate
      (hub.memory_budget) beside what `serve` reaches once every one of the 35 languages can answer
      and the warm-up is done (GET /api/memory): the model's weights and KV cache, the prompt
      states, the fast path (and per language), the home, the rest; the hub's own share (RSS less
      the model's weights, KV cache and prompt states; bar: 300 MiB), each estimate / measure
      (bar: within 15 % in all).
  --turns N [--home-changes K]: the hub's own share over N fast-path turns across the 35
      languages (bench/data/first_commands.yaml: on and off in turn), K home changes (an alias
      added or taken away over REST) spread among them, measured every --every turns from the
      point every language has answered once (bar: within 5 %).
  --cache N: N model turns, each in its own conversation, so the saved prompt states fill their
      cache (--cache-mib) and every turn after that evicts one: RSS and what /proc/PID/smaps says
      it is made of (the malloc heap, anonymous mappings small and large, the model file, other
      files), and its rise once the cache filled (issue #30: under 10 % over 200 turns).

    python bench/bench_memory.py [--split] [--model PATH --n-ctx N] [--turns 1000 --home-changes 24]
                                 [--cache 200 --cache-mib 32]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from reliability.served_hub import MODEL_TEXTS, ServedHub  # noqa: E402

from hub.config import validate  # noqa: E402
from hub.llm.models import gemma3_270m_path, resolve_model_path  # noqa: E402
from hub.locales import SUPPORTED_LANGUAGES  # noqa: E402
from hub.memory_budget import estimate  # noqa: E402

TOKEN = "bench-memory-token"
MIB = 2**20
OWN_BAR = 300 * MIB
COMMANDS = Path(__file__).resolve().parent / "data" / "first_commands.yaml"
_BIG_MAPPING = 32 * MIB  # an anonymous mapping this large: a malloc arena's heap or llama.cpp's buffers


def rss_parts(pid: int) -> dict[str, int]:
    """The process's RSS (KiB) by the kind of mapping holding it."""
    parts: dict[str, int] = {}
    kind = "other"
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        fields = line.split()
        if fields and "-" in fields[0] and not fields[0].endswith(":"):
            start, end = (int(x, 16) for x in fields[0].split("-"))
            path = fields[5] if len(fields) > 5 else ""
            kind = ("heap" if path == "[heap]" else "model" if path.endswith(".gguf")
                    else ("anon large" if end - start >= _BIG_MAPPING else "anon") if not path
                    else "other" if path.startswith("[") else "files")
        elif fields and fields[0] == "Rss:":
            parts[kind] = parts.get(kind, 0) + int(fields[1])
    return parts


class Served:
    """A served hub and an HTTP session to it."""

    def __init__(self, hub: ServedHub, session: aiohttp.ClientSession) -> None:
        self.hub, self.session = hub, session
        self.url = f"http://127.0.0.1:{hub.ports['http_port']}"

    async def memory(self, objects: bool = True) -> dict[str, Any]:
        async with self.session.get(f"{self.url}/api/memory", params={"objects": str(objects).lower()}) as response:
            return dict(await response.json())

    async def ready(self, timeout: float = 900, objects: bool = True) -> dict[str, Any]:
        """The memory report once the warm-up is done and every language prepared (`objects`: with
        the walk of the hub's objects, whose bookkeeping leaves some MiB with the allocator)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            async with self.session.get(f"{self.url}/health") as response:
                ready = (await response.json())["status"] == "ok"
            report = await self.memory(objects=False)
            if ready and len(report["languages"]) >= len(SUPPORTED_LANGUAGES):
                await asyncio.sleep(10)  # the last language's settling
                return await self.memory(objects)
            await asyncio.sleep(5)
        raise TimeoutError("the languages were not all prepared")

    async def ask(self, text: str, language: str | None = None, conversation: str = "bench") -> dict[str, Any]:
        body = {"text": text, "conversation_id": conversation, **({"language": language} if language else {})}
        async with self.session.post(f"{self.url}/api/ask", json=body) as response:
            return dict(await response.json())


async def serving(workdir: Path, model: Path, options: dict[str, Any]) -> tuple[ServedHub, aiohttp.ClientSession]:
    hub = ServedHub(workdir, model, {"api_token": TOKEN, **options}).start()
    return hub, aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"},
                                      timeout=aiohttp.ClientTimeout(total=600))


# --- the split, against the estimate ----------------------------------------------------------


def configurations(args: argparse.Namespace) -> list[tuple[str, Path, int]]:
    if args.model or args.n_ctx:
        model = args.model or resolve_model_path(None)[0]
        return [(model.stem, model, args.n_ctx or int(validate({}).values["n_ctx"]))]
    default = int(validate({}).values["n_ctx"])
    return [("SmolLM2 (the embedded default)", resolve_model_path(None)[0], default),
            ("Gemma 3 270M", gemma3_270m_path(), default),
            ("SmolLM2, another n_ctx", resolve_model_path(None)[0], 2048)]


async def split(name: str, model: Path, n_ctx: int) -> bool:
    """Serve `model` at `n_ctx` with the embedded defaults; print its split beside the estimate."""
    budget = estimate(validate({"model_path": str(model), "n_ctx": n_ctx}))
    with tempfile.TemporaryDirectory() as workdir:
        hub, session = await serving(Path(workdir), model, {"n_ctx": n_ctx, "max_tokens": 256})
        try:
            served = Served(hub, session)
            started = time.monotonic()
            report = await served.ready()
            waited = time.monotonic() - started
        finally:
            await session.close()
            hub.stop()
    measured = report["parts"]
    print(f"\n{name}: n_ctx {n_ctx}, every language answering {waited:.0f} s after start "
          f"({sum(1 for v in report['languages'].values() if v == 'full')} in full: "
          f"{', '.join(k for k, v in report['languages'].items() if v == 'full')})")
    print(f"  {'part':<16}{'served MiB':>12}{'estimate MiB':>14}{'estimate/served':>17}")
    worst = 0.0
    for part in [*budget.parts, "rest"]:
        served_bytes, estimated = measured.get(part, 0), budget.parts.get(part, budget.rest)
        ratio = estimated / served_bytes if served_bytes else float("inf")
        print(f"  {part:<16}{served_bytes / MIB:>12.1f}{estimated / MIB:>14.1f}{ratio:>17.2f}")
    for label, served_bytes, estimated in [("RSS", report["rss"], budget.total), ("own", report["own"], budget.own)]:
        ratio = estimated / served_bytes
        worst = max(worst, abs(ratio - 1))
        print(f"  {label:<16}{served_bytes / MIB:>12.1f}{estimated / MIB:>14.1f}{ratio:>17.2f}")
    languages = report["detail"]["fast_path"]
    print("  fast path per language (MiB): " + ", ".join(f"{code} {b / MIB:.1f}" for code, b in languages.items()))
    ok = report["own"] <= OWN_BAR and worst <= 0.15
    print(f"  own share {report['own'] / MIB:.0f} MiB (bar {OWN_BAR / MIB:.0f}); estimate within "
          f"{worst:.0%} of RSS and own (bar 15 %): {'ok' if ok else 'NOT MET'}")
    return ok


# --- flat over turns and home changes ----------------------------------------------------------


async def flat(model: Path, turns: int, home_changes: int, every: int) -> bool:
    table = yaml.safe_load(COMMANDS.read_text(encoding="utf-8"))
    pairs = [(language, *table[language]) for language in SUPPORTED_LANGUAGES]
    with tempfile.TemporaryDirectory() as workdir:
        hub, session = await serving(Path(workdir), model, {"max_tokens": 16})
        served = Served(hub, session)
        try:
            ready = (await served.ready(objects=False))["own"]
            unanswered = sum([await turn_pair(served, *pair) for pair in pairs], 0)  # each language once
            await asyncio.sleep(10)  # the languages heard prepared in full meanwhile
            start = (await served.memory(objects=False))["own"]
            print(f"own share {ready / MIB:.1f} MiB once every language can answer, {start / MIB:.1f} MiB once "
                  f"each has answered", flush=True)
            curve, started = [(0, start)], time.monotonic()
            change_every = max(1, turns // (home_changes + 1)) if home_changes else turns + 1
            for number in range(1, turns + 1):
                language, on, off = pairs[(number // 2) % len(pairs)]
                answer = await served.ask(on if number % 2 else off, language, f"flat-{language}")
                unanswered += answer.get("path") != "fast_path"
                if number % change_every == 0 and number // change_every <= home_changes:
                    await change_home(served, number // change_every)
                if number % every == 0:
                    curve.append((number, (await served.memory(objects=False))["own"]))
                    print(f"turn {number:5d}: own {curve[-1][1] / MIB:7.1f} MiB", flush=True)
            final = await served.memory()
        finally:
            await session.close()
            hub.stop()
    highest = max(own for _, own in curve)
    rise = (highest - start) / start
    print(f"{turns} turns across {len(pairs)} languages with {home_changes} home changes in "
          f"{time.monotonic() - started:.0f} s ({unanswered} not answered by the fast path): own share "
          f"{start / MIB:.1f} MiB after every language answered once, highest {highest / MIB:.1f} "
          f"(+{rise:.1%}; bar 5 %), median {statistics.median(o for _, o in curve) / MIB:.1f}; at the end "
          f"RSS {final['rss'] / MIB:.0f} MiB: " + ", ".join(f"{k} {v / MIB:.1f}" for k, v in final["parts"].items()))
    return rise <= 0.05


async def turn_pair(served: Served, language: str, on: str, off: str) -> int:
    """Both commands of a language; how many the fast path did not answer."""
    return sum([(await served.ask(text, language, f"flat-{language}")).get("path") != "fast_path"
                for text in (on, off)])


async def change_home(served: Served, number: int) -> None:
    """An alias of the desk lamp added (odd changes) or taken away again (even ones)."""
    body = {"kind": "entity", "target": "light.desk_lamp", "name": f"Lamp {(number + 1) // 2}"}
    method = served.session.post if number % 2 else served.session.delete
    async with method(f"{served.url}/api/names", json=body) as response:
        assert response.status == 200, await response.text()


# --- the prompt-state cache (issue #30) --------------------------------------------------------


async def cache(model: Path, turns: int, cache_mib: int, every: int, fill: int) -> None:
    with tempfile.TemporaryDirectory() as workdir:
        hub = ServedHub(Path(workdir), model, {
            "api_token": TOKEN, "threads": 1, "prompt_cache_mib": cache_mib}).start()
        curve: list[tuple[int, int]] = [(0, hub.rss_kb())]
        failed = 0
        started = time.monotonic()
        try:
            async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"}) as session:
                served = Served(hub, session)
                for turn in range(1, turns + 1):
                    answer = await served.ask(MODEL_TEXTS[turn % len(MODEL_TEXTS)], conversation=f"memory-{turn}")
                    failed += not answer.get("ok")
                    if turn % every == 0:
                        curve.append((turn, hub.rss_kb()))
                        parts = "  ".join(f"{kind} {kib / 1024:.1f}" for kind, kib in rss_parts(hub.process.pid).items())
                        print(f"turn {turn:4d}: RSS {curve[-1][1] / 1024:7.1f} MiB  ({parts})", flush=True)
        finally:
            hub.stop()
    full = next(rss for turn, rss in curve if turn >= fill)
    peak = max(rss for turn, rss in curve if turn >= fill)
    print(f"{turns} model turns in {time.monotonic() - started:.0f} s ({failed} not ok); RSS at start "
          f"{curve[0][1] / 1024:.1f} MiB, at turn {fill} (cache full) {full / 1024:.1f} MiB, "
          f"highest after {peak / 1024:.1f} MiB: +{(peak - full) / full:.1%} after the cache filled")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", action="store_true", help="the split against the estimate (the default)")
    parser.add_argument("--model", type=Path, default=None)
    parser.add_argument("--n-ctx", type=int, default=None)
    parser.add_argument("--turns", type=int, default=0, help="fast-path turns across the 35 languages")
    parser.add_argument("--home-changes", type=int, default=24)
    parser.add_argument("--cache", type=int, default=0, help="model turns filling the prompt-state cache")
    parser.add_argument("--cache-mib", type=int, default=32)
    parser.add_argument("--every", type=int, default=50, help="turns between measurements")
    parser.add_argument("--fill", type=int, default=40, help="model turns after which the cache counts as full")
    args = parser.parse_args()
    if args.cache:
        await cache(args.model or gemma3_270m_path(), args.cache, args.cache_mib, args.every, args.fill)
    if args.turns:
        await flat(args.model or resolve_model_path(None)[0], args.turns, args.home_changes, args.every)
    if args.split or not (args.cache or args.turns):
        results = [await split(*configuration) for configuration in configurations(args)]
        print(f"\n{sum(results)} of {len(results)} configurations within the bars")


if __name__ == "__main__":
    asyncio.run(main())
