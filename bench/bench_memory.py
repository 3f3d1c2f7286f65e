"""Memory bench against `python -m hub serve`: the hub's RSS over N model turns, each in its own
conversation, so the saved prompt states fill their cache (`prompt_cache_mib`) early and every
turn after that evicts one. Prints the RSS curve and its rise after the cache filled (the issue's
bar: under 10% over 200 turns), and what it is made of at each point (/proc/PID/smaps: the
malloc heap, anonymous mappings small and large, the model file, other files). Usage:
  python bench/bench_memory.py [--model PATH] [--turns N] [--cache-mib N] [--every N]
(default model: Gemma 3 270M, 200 turns, a 32 MiB cache, a point every 20 turns).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from reliability.served_hub import MODEL_TEXTS, ServedHub  # noqa: E402

from hub.llm.models import gemma3_270m_path  # noqa: E402

TOKEN = "bench-memory-token"
_BIG_MAPPING = 32 * 2**20  # an anonymous mapping this large: a malloc arena's heap or llama.cpp's buffers


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


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=None)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--cache-mib", type=int, default=32)
    parser.add_argument("--every", type=int, default=20)
    parser.add_argument("--fill", type=int, default=40, help="turns after which the cache counts as full")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        hub = ServedHub(Path(workdir), args.model or gemma3_270m_path(), {
            "api_token": TOKEN, "threads": 1, "prompt_cache_mib": args.cache_mib}).start()
        curve: list[tuple[int, int]] = [(0, hub.rss_kb())]
        failed = 0
        started = time.monotonic()
        try:
            async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"}) as session:
                for turn in range(1, args.turns + 1):
                    body = {"text": MODEL_TEXTS[turn % len(MODEL_TEXTS)], "conversation_id": f"memory-{turn}"}
                    async with session.post(f"http://127.0.0.1:{hub.ports['http_port']}/api/ask", json=body) as response:
                        failed += not (await response.json()).get("ok")
                    if turn % args.every == 0:
                        curve.append((turn, hub.rss_kb()))
                        parts = "  ".join(f"{kind} {kib / 1024:.1f}" for kind, kib in rss_parts(hub.process.pid).items())
                        print(f"turn {turn:4d}: RSS {curve[-1][1] / 1024:7.1f} MiB  ({parts})", flush=True)
        finally:
            hub.stop()
    full = next(rss for turn, rss in curve if turn >= args.fill)
    peak = max(rss for turn, rss in curve if turn >= args.fill)
    print(f"{args.turns} model turns in {time.monotonic() - started:.0f} s ({failed} not ok); RSS at start "
          f"{curve[0][1] / 1024:.1f} MiB, at turn {args.fill} (cache full) {full / 1024:.1f} MiB, "
          f"highest after {peak / 1024:.1f} MiB: +{(peak - full) / full:.1%} after the cache filled")


if __name__ == "__main__":
    asyncio.run(main())
