"""What a served hub says to requests outside every template, as users hear it: 320 requests in 8
languages (`bench/data/off_template_requests.yaml`: out-of-scope commands, devices the demo home
lacks, general questions, nonsense, jokes) over REST `/api/ask`, each in its own conversation,
on the embedded defaults but for the model. Counts the replies that

- share a run of 6+ words with what the model is given (the system prompt, the tool
  declarations, the home's state lines, the user message's head),
- hold an entity id, a tool name, or role/tool markup,
- loop (a sentence said again, numbering and single letters aside) or run past the reply cap,
- are not in the request's language (py3langid over the 8 languages, replies of 4+ words).

It judges from its own copy of those texts, not from the hub's filter. Usage:
  python bench/bench_unspoken.py [--model PATH] [--languages en,de] [--show N]
(default model: Gemma 3 270M; `--model smollm2` for SmolLM2-135M-Instruct).
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import aiohttp
import py3langid
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from reliability.served_hub import ServedHub  # noqa: E402

from hub.agent import prompt  # noqa: E402
from hub.backends.demo.home import load_demo_home  # noqa: E402
from hub.core.tools import ToolRegistry  # noqa: E402
from hub.home.catalogue import build_home_tools  # noqa: E402
from hub.home.entities import EntityStore  # noqa: E402
from hub.home.resolve import EntityResolver  # noqa: E402
from hub.home.view import StoreHomeView  # noqa: E402
from hub.llm.models import gemma3_270m_path, smollm2_path  # noqa: E402
from hub.llm.text_tools import text_tool_instructions  # noqa: E402

TOKEN = "bench-unspoken-token"
REQUESTS = Path(__file__).parent / "data" / "off_template_requests.yaml"
RUN = 6  # shared words in a row that count as reciting
MAX_REPLY_CHARS = 400  # the hub's default reply cap
_WORD = re.compile(r"\w+")
_ENTITY_ID = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)*\.[a-z0-9]+(?:_[a-z0-9]+)*\b")
_MARKUP = re.compile(r"<\|?/?[A-Za-z_]+\|?>|\[/?(?:INST|TOOL_CALLS|SYS)\]|^\s*(?:system|user|assistant|model|tool)\s*:",
                     re.IGNORECASE | re.MULTILINE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _words(text: str) -> list[str]:
    return _WORD.findall(re.sub(r"<[^<>]*>", " ", text).casefold().replace("_", " "))


def _runs(words: list[str]) -> set[tuple[str, ...]]:
    return {tuple(words[i:i + RUN]) for i in range(len(words) - RUN + 1)}


class Judge:
    """What the model is given in the demo home, and the checks of a reply against it."""

    def __init__(self) -> None:
        store = EntityStore()
        load_demo_home(store)
        resolver = EntityResolver(store)
        registry = ToolRegistry()
        for tool in build_home_tools(store, resolver):
            registry.register(tool)
        home = StoreHomeView(store, resolver)
        specs = registry.specs()
        given = [prompt.stable_system_message(home, True).content, prompt.stable_system_message(home, False).content,
                 text_tool_instructions(specs), home.live_states(list(store.all())),
                 *(prompt.user_message_head(code, "Monday 2026-11-30 08:00") for code in prompt.LANGUAGE_NAMES)]
        self.given_runs = set().union(*(_runs(_words(text)) for text in given))
        self.tool_names = {s.name for s in specs if "_" in s.name}
        self.entity_ids = {e.entity_id for e in store.all()}
        self.domains = {e.domain for e in store.all()} | {"sensor", "binary_sensor", "switch", "vacuum", "todo",
                                                           "weather", "calendar", "timer", "input_boolean"}

    def faults(self, reply: str, language: str) -> list[str]:
        found = []
        if _runs(_words(reply)) & self.given_runs:
            found.append("prompt")
        ids = [m for m in _ENTITY_ID.findall(reply) if m in self.entity_ids or m.split(".")[0] in self.domains]
        if ids:
            found.append("entity_id")
        if any(re.search(rf"\b{re.escape(name)}\b", reply) for name in self.tool_names):
            found.append("tool_name")
        if _MARKUP.search(reply):
            found.append("markup")
        if _loops(reply) or len(reply) > MAX_REPLY_CHARS:
            found.append("loop")
        if len(_words(reply)) >= 4 and py3langid.classify(reply)[0] != language:
            found.append("language")
        return found


def _loops(reply: str) -> bool:
    seen = set()
    for sentence in _SENTENCE_END.split(reply):
        key = tuple(w for w in _words(sentence) if len(w) > 1 and not w.isdigit())
        if key and key in seen:
            return True
        seen.add(key)
    return False


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="a GGUF path, or 'smollm2' (default: Gemma 3 270M)")
    parser.add_argument("--languages", default=None, help="comma-separated (default: all 8)")
    parser.add_argument("--show", type=int, default=3, help="examples printed per kind of fault")
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
                        faults["empty"] += not reply.strip()
        finally:
            hub.stop()
    total = sum(len(t) for t in requests.values())
    print(f"{model.name}: {total} requests in {len(requests)} languages, {time.monotonic() - started:.0f} s; "
          f"paths {dict(paths)}")
    for kind in ("prompt", "entity_id", "tool_name", "markup", "loop", "language", "empty", "any"):
        print(f"  {kind:10s} {faults[kind]:4d}")
    for kind, shown in examples.items():
        for line in shown[:args.show]:
            print(f"  {kind}: {line[:300]}")


if __name__ == "__main__":
    asyncio.run(main())
