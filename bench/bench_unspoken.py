"""What a served hub says to requests outside every template, as users hear it: 320 requests in 8
languages (`bench/data/off_template_requests.yaml`: out-of-scope commands, devices the demo home
lacks, general questions, nonsense, jokes) over REST `/api/ask`, each in its own conversation,
on the embedded defaults but for the model. Counts the replies that

- share a run of 6+ words with what the model is given (the system prompt, the tool
  declarations, the home's state lines, the user message's head),
- hold an entity id, a tool name, or role/tool markup,
- loop (a sentence said again, numbering and single letters aside) or run past the reply cap,
- are not in the request's language (py3langid over the 8 languages, replies of 4+ words).

It judges from its own copy of those texts (`tests/helpers/unspoken_judge.py`), not from the
hub's filter. Usage:
  python bench/bench_unspoken.py [--model PATH] [--languages en,de] [--show N] [--dump FILE]
(default model: Gemma 3 270M; `--model smollm2` for SmolLM2-135M-Instruct).
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

import aiohttp
import py3langid
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from helpers.unspoken_judge import Judge  # noqa: E402
from reliability.served_hub import ServedHub  # noqa: E402

from hub.llm.models import gemma3_270m_path, smollm2_path  # noqa: E402

TOKEN = "bench-unspoken-token"
REQUESTS = Path(__file__).parent / "data" / "off_template_requests.yaml"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="a GGUF path, or 'smollm2' (default: Gemma 3 270M)")
    parser.add_argument("--languages", default=None, help="comma-separated (default: all 8)")
    parser.add_argument("--show", type=int, default=3, help="examples printed per kind of fault")
    parser.add_argument("--dump", type=Path, default=None, help="write every reply there (JSON lines)")
    args = parser.parse_args()
    model = smollm2_path() if args.model == "smollm2" else Path(args.model) if args.model else gemma3_270m_path()
    requests: dict[str, list[str]] = yaml.safe_load(REQUESTS.read_text(encoding="utf-8"))
    if args.languages:
        requests = {code: requests[code] for code in args.languages.split(",")}
    py3langid.set_languages(list(requests) if len(requests) > 1 else None)
    judge = Judge()
    faults: Counter[str] = Counter()
    examples: dict[str, list[str]] = {}
    paths: Counter[str] = Counter()
    replies: list[dict] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as workdir:
        hub = ServedHub(Path(workdir), model, {"api_token": TOKEN, "max_tokens": 256, "threads": 1}).start()
        try:
            async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"}) as session:
                for code, texts in requests.items():
                    for i, text in enumerate(texts):
                        body = {"text": text, "language": code, "conversation_id": f"unspoken-{code}-{i}"}
                        async with session.post(f"http://127.0.0.1:{hub.ports['http_port']}/api/ask",
                                                json=body) as response:
                            answer = await response.json()
                        reply = answer.get("reply") or ""
                        paths[answer.get("path") or "?"] += 1
                        found = judge.faults(reply, code)
                        for fault in found:
                            faults[fault] += 1
                            examples.setdefault(fault, []).append(f"[{code}] {text!r} → {reply!r}")
                        faults["any"] += bool(found)
                        replies.append({"language": code, "request": text, "reply": reply,
                                        "path": answer.get("path"), "faults": found})
                        faults["empty"] += not reply.strip()
        finally:
            hub.stop()
    total = sum(len(t) for t in requests.values())
    print(f"{model.name}: {total} requests in {len(requests)} languages, {time.monotonic() - started:.0f} s; "
          f"paths {dict(paths)}")
    for kind in ("prompt", "entity_id", "tool_name", "markup", "loop", "language", "empty", "any"):
        print(f"  {kind:10s} {faults[kind]:4d}")
    if args.dump is not None:
        args.dump.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in replies), encoding="utf-8")
    for kind, shown in examples.items():
        for line in shown[:args.show]:
            print(f"  {kind}: {line[:300]}")


if __name__ == "__main__":
    asyncio.run(main())
