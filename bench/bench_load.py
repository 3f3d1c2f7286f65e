"""Load bench against `python -m hub serve`: mixed rounds, then model floods.

Mixed round: 20 Wyoming clients + 20 MQTT askers at once (every third a model turn, the rest the
fast path). Model flood: 20 REST + 20 MQTT model asks at once, where the queue's admission
(turn_timeout) decides who is answered and who is told "busy" at once.
Prints throughput (requests/s), p50/p95 latency per kind and outcome, and the hub's RSS before
and after each round. Usage:
  python bench/bench_load.py [--model PATH] [--rounds N] [--floods N] [--threads N] [--turn-timeout S]
(default model: Gemma 3 270M; threads 1, which holds up on a shared 2-core box).
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from reliability.served_hub import MODEL_TEXTS, Answer, MqttAsker, ServedHub, run_load  # noqa: E402

from hub.llm.models import gemma3_270m_path  # noqa: E402

TOKEN = "bench-load-token"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else float("nan")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=None)
    parser.add_argument("--rounds", type=int, default=2, help="mixed Wyoming + MQTT rounds")
    parser.add_argument("--floods", type=int, default=2, help="REST + MQTT model floods")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--turn-timeout", type=int, default=30)
    args = parser.parse_args()
    print(f"llama.cpp threads {args.threads}, turn_timeout {args.turn_timeout} s")
    with tempfile.TemporaryDirectory() as workdir:
        hub = ServedHub(Path(workdir), args.model or gemma3_270m_path(), {
            "api_token": TOKEN, "threads": args.threads, "turn_timeout": args.turn_timeout}).start()
        asker = MqttAsker(hub.mqtt_port)
        try:
            asker.wait_connected()
            rss = [("start", hub.rss_kb())]
            for n in range(args.rounds):
                load = await run_load(hub, asker, f"r{n}", timeout=args.turn_timeout + 120)
                rss.append((f"mixed {n}", hub.rss_kb()))
                report(f"mixed round {n}", load.answers, load.seconds, len(load.missing))
                report_order(load)
            for n in range(args.floods):
                answers, seconds, missing = await model_flood(hub, asker, f"f{n}", args.turn_timeout + 120)
                rss.append((f"flood {n}", hub.rss_kb()))
                report(f"model flood {n}", answers, seconds, missing)
            print("hub RSS (MB): " + ", ".join(f"{name} {kb / 1024:.0f}" for name, kb in rss))
        finally:
            asker.close()
            hub.stop()
    print("Absolute numbers on a shared 2-core box are only indicative; compare runs on one machine.")


async def model_flood(hub: ServedHub, asker: MqttAsker, name: str, timeout: float,
                      asks: int = 20) -> tuple[list[Answer], float, int]:
    """`asks` REST and `asks` MQTT model asks at once, each in its own conversation."""
    url = f"http://127.0.0.1:{hub.ports['http_port']}/api/ask"
    started = time.monotonic()

    async def rest(session: aiohttp.ClientSession, i: int) -> Answer:
        sent = time.monotonic()
        body = {"text": MODEL_TEXTS[i % len(MODEL_TEXTS)], "conversation_id": f"{name}-rest-{i}"}
        async with session.post(url, json=body) as response:
            reply = await response.json()
        return Answer("model", "rest", outcome(reply), reply.get("reply", ""), time.monotonic() - sent)

    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"},
                                     timeout=aiohttp.ClientTimeout(total=timeout)) as session:
        tasks = [asyncio.create_task(rest(session, i)) for i in range(asks)]
        sent = {}
        for i in range(asks):
            ask_id = f"{name}-mqtt-{i}"
            sent[ask_id] = asker.ask(ask_id, MODEL_TEXTS[i % len(MODEL_TEXTS)], f"{name}-mqtt-conv-{i}")
        answers = list(await asyncio.gather(*tasks))
    await asker.wait_for(list(sent), timeout - (time.monotonic() - started))
    missing = 0
    for ask_id, sent_at in sent.items():
        found = asker.reply_for(ask_id)
        if found is None:
            missing += 1
            continue
        arrived, reply = found
        answers.append(Answer("model", "mqtt", outcome(reply), reply.get("text") or "", arrived - sent_at))
    return answers, time.monotonic() - started, missing


def outcome(reply: dict) -> str:
    return "reply" if reply.get("ok") else "busy" if reply.get("error") == "busy" else f"error:{reply.get('error')}"


def report(title: str, answers: list[Answer], seconds: float, missing: int) -> None:
    answered = [a for a in answers if a.outcome in ("handled", "reply")]
    print(f"{title}: {len(answers)} requests in {seconds:.1f} s; {len(answered)} answered = "
          f"{len(answered) / seconds:.2f} answers/s; missing {missing}")
    print(f"  outcomes: {dict(Counter((a.kind, a.channel, a.outcome) for a in answers))}")
    for kind in ("fast", "model"):
        for label, group in (("answered", [a for a in answered if a.kind == kind]),
                             ("busy", [a for a in answers if a.kind == kind and a.outcome == "busy"])):
            latencies = [a.latency_s for a in group]
            if latencies:
                print(f"  {kind:5} {label:8} n={len(latencies):2}  p50 {percentile(latencies, 0.5):6.2f} s  "
                      f"p95 {percentile(latencies, 0.95):6.2f} s  max {max(latencies):6.2f} s")


def report_order(load) -> None:
    gaps = load.describe_gaps
    print(f"  describe: {len(gaps)} polls, p50 {statistics.median(gaps) * 1000:.0f} ms, "
          f"max {max(gaps) * 1000:.0f} ms")
    ordered = sum(order == load.expected_orders[c] for c, order in load.conversation_orders.items())
    print(f"  conversations answered in order: {ordered}/{len(load.conversation_orders)}")


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # `finally` stops the served hub
    asyncio.run(main())
