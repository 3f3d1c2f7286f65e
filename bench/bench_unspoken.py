"""What a served hub says to requests outside every template, as users hear it: the requests of
`bench/data/off_template_requests.yaml` in 8 languages (out-of-scope commands, devices the demo
home lacks, general questions, questions about the home in words of our own, nonsense, jokes and
chit-chat) over REST `/api/ask`, each in its own conversation, on the embedded defaults but for
the model. Every reply goes through the hub's own judge of spoken replies (`hub.agent.judge`, over
the demo home: `tests/helpers/unspoken_judge.py`), and the bench counts each kind of fault:
machinery words, the prompt recited, entity ids, tool names, markup, the request said back, loops,
an unfinished last sentence, another language, a value the turn did not read, a reply unrelated
to the request, a non-word, no reply; and how many model turns ended in the hub's fallback.

Usage:
  python bench/bench_unspoken.py [--model PATH|smollm2] [--runs N] [--languages en,de] [--show N] [--spoken] [--dump FILE]
(default model: Gemma 3 270M; `--model smollm2` for SmolLM2-135M-Instruct). Each run is a fresh
served hub; the counts are printed per run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import aiohttp
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from helpers.unspoken_judge import KINDS, Judge, is_fallback, read_of  # noqa: E402
from reliability.served_hub import ServedHub  # noqa: E402

from hub.llm.models import gemma3_270m_path, smollm2_path  # noqa: E402
from hub.understanding import language as language_id  # noqa: E402

TOKEN = "bench-unspoken-token"
REQUESTS = Path(__file__).parent / "data" / "off_template_requests.yaml"


async def one_run(model: Path, requests: dict[str, list[str]]) -> list[dict[str, Any]]:
    """Every request asked of a fresh served hub, each reply with its path and faults."""
    replies = []
    with tempfile.TemporaryDirectory() as workdir:
        hub = ServedHub(Path(workdir), model, {"api_token": TOKEN, "max_tokens": 256, "threads": 1}).start()
        try:
            async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"}) as session:
                async with session.get(f"http://127.0.0.1:{hub.ports['http_port']}/api/entities") as response:
                    judge = Judge(names=[n for e in await response.json() for n in (e["name"], e["area"] or "")])
                for code, texts in requests.items():
                    for i, text in enumerate(texts):
                        body = {"text": text, "language": code, "conversation_id": f"unspoken-{code}-{i}"}
                        async with session.post(f"http://127.0.0.1:{hub.ports['http_port']}/api/ask",
                                                json=body) as response:
                            answer = await response.json()
                        reply = answer.get("reply") or ""
                        replies.append({"language": code, "request": text, "reply": reply,
                                        "path": answer.get("path"), "timings": answer.get("timings") or {},
                                        "fallback": is_fallback(answer),
                                        "faults": judge.faults(reply, code, text, read_of(answer))})
        finally:
            hub.stop()
    return replies


def report(run: int, replies: list[dict[str, Any]], seconds: float, show: int) -> Counter[str]:
    faults = Counter(kind for r in replies for kind in r["faults"])
    faults["any"] = sum(bool(r["faults"]) for r in replies)
    paths = Counter(r["path"] or "?" for r in replies)
    fallbacks = sum(r["fallback"] for r in replies)
    print(f"run {run}: {len(replies)} requests, {seconds:.0f} s; paths {dict(paths)}; model turns ending in the "
          f"hub's fallback {fallbacks}")
    print("  " + "  ".join(f"{kind} {faults[kind]}" for kind in (*KINDS, "any")))
    model = [r["timings"] for r in replies if r["path"] == "model"]
    if model:  # where a model turn's time goes: the prompt read (of it, what the cache did not hold) or the reply
        total = {key: sum(t.get(key, 0) for t in model) for key in (
            "total_s", "prefill_s", "decode_s", "prompt_tokens", "evaluated_prompt_tokens", "completion_tokens")}
        print(f"  model turns {len(model)}: {total['total_s']:.0f} s in all, prompt read {total['prefill_s']:.0f} s "
              f"({total['evaluated_prompt_tokens']} of {total['prompt_tokens']} prompt tokens read, the rest cached), "
              f"reply {total['decode_s']:.0f} s ({total['completion_tokens']} tokens)")
    for kind in KINDS:
        for r in [r for r in replies if kind in r["faults"]][:show]:
            print(f"  {kind}: [{r['language']}] {r['request']!r} → {r['reply'][:240]!r}")
    return faults


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="a GGUF path, or 'smollm2' (default: Gemma 3 270M)")
    parser.add_argument("--runs", type=int, default=1, help="fresh served hubs, one after the other")
    parser.add_argument("--languages", default=None, help="comma-separated (default: all 8)")
    parser.add_argument("--show", type=int, default=3, help="examples printed per kind of fault")
    parser.add_argument("--spoken", action="store_true", help="print every model turn's reply the hub spoke")
    parser.add_argument("--dump", type=Path, default=None, help="write every reply there (JSON lines)")
    args = parser.parse_args()
    model = smollm2_path() if args.model == "smollm2" else Path(args.model) if args.model else gemma3_270m_path()
    requests: dict[str, list[str]] = yaml.safe_load(REQUESTS.read_text(encoding="utf-8"))
    if args.languages:
        requests = {code: requests[code] for code in args.languages.split(",")}
    assert await language_id.prepare()
    total: Counter[str] = Counter()
    dumped: list[dict[str, Any]] = []
    for run in range(1, args.runs + 1):
        started = time.monotonic()
        replies = await one_run(model, requests)
        total += report(run, replies, time.monotonic() - started, args.show)
        for r in [r for r in replies if args.spoken and r["path"] == "model" and not r["fallback"]]:
            print(f"  spoken: [{r['language']}] {r['request']!r} → {r['reply']!r} {r['faults'] or ''}")
        dumped += [{"run": run, **r} for r in replies]
    count = sum(map(len, requests.values()))
    print(f"{model.name}: {args.runs} run(s) of {count} requests in {len(requests)} languages; faults in all: "
          + "  ".join(f"{kind} {total[kind]}" for kind in (*KINDS, "any")))
    if args.dump is not None:
        args.dump.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in dumped), encoding="utf-8")


if __name__ == "__main__":
    asyncio.run(main())
