"""Load bench: 20 Wyoming clients + 20 MQTT askers at once against `python -m hub serve`.

Prints throughput (requests/s) and p50/p95 turn latency for fast-path and model requests.
Usage: python bench/bench_load.py [--model PATH] [--rounds N]   (default model: Gemma 3 270M)
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import statistics
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from reliability.served_hub import MqttAsker, ServedHub, run_load  # noqa: E402

from hub.llm.models import gemma3_270m_path  # noqa: E402


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else float("nan")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=None)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        hub = ServedHub(Path(workdir), args.model or gemma3_270m_path()).start()
        asker = MqttAsker(hub.mqtt_port)
        try:
            asker.wait_connected()
            rss = [hub.rss_kb()]
            for n in range(args.rounds):
                load = await run_load(hub, asker, f"r{n}")
                rss.append(hub.rss_kb())
                report(n, load)
            print(f"hub RSS (MB) before and after each round: {', '.join(f'{kb / 1024:.0f}' for kb in rss)}")
        finally:
            asker.close()
            hub.stop()
    print("Absolute numbers on a shared 2-core box are only indicative; compare runs on one machine.")


def report(n: int, load) -> None:
    print(f"round {n}: {len(load.answers)} requests in {load.seconds:.1f} s = "
          f"{len(load.answers) / load.seconds:.2f} requests/s; missing {len(load.missing)}")
    print(f"  outcomes: {dict(Counter((a.kind, a.channel, a.outcome) for a in load.answers))}")
    for kind in ("fast", "model"):
        latencies = [a.latency_s for a in load.answers if a.kind == kind and a.outcome != "busy"]
        if latencies:
            print(f"  {kind:5} n={len(latencies):2}  p50 {percentile(latencies, 0.5):6.2f} s  "
                  f"p95 {percentile(latencies, 0.95):6.2f} s  max {max(latencies):6.2f} s")
    gaps = load.describe_gaps
    print(f"  describe: {len(gaps)} polls, p50 {statistics.median(gaps) * 1000:.0f} ms, "
          f"max {max(gaps) * 1000:.0f} ms")
    ordered = sum(order == load.expected_orders[c] for c, order in load.conversation_orders.items())
    print(f"  conversations answered in order: {ordered}/{len(load.conversation_orders)}")


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # `finally` stops the served hub
    asyncio.run(main())
