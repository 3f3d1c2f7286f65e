"""Regenerate hub/locales/intents_2025_6/ from the home-assistant-intents 2025.6.23 wheel.

Keeps, per language, the intents the hub handles (`hub.understanding.recognition.HANDLED_INTENTS`) and
the lists and expansion rules they use (followed through the rules), plus the skip words;
gzipped JSON named by the installed package's language codes ("pt-br" → "pt-BR").

    pip download home-assistant-intents==2025.6.23 --no-deps -d /tmp/hai
    python scripts/vendor_intents.py /tmp/hai/home_assistant_intents-2025.6.23-py3-none-any.whl
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from home_assistant_intents import get_languages  # noqa: E402

from hub.understanding.recognition import HANDLED_INTENTS, OLDER_INTENTS  # noqa: E402

_RULE = re.compile(r"<([^<>{}]+)>")
_LIST = re.compile(r"\{([^{}:<>]+)(?::[^{}]*)?\}")


def used(data: dict, intents: dict) -> tuple[set[str], set[str]]:
    """The expansion rules and lists that `intents` refer to, directly or through rules and
    list values (which may be templates too)."""
    rules: set[str] = set()
    lists: set[str] = set()
    pending = [json.dumps(intents, ensure_ascii=False)]
    while pending:
        text = pending.pop()
        for name in set(_LIST.findall(text)) - lists:
            if name in data["lists"]:
                lists.add(name)
                pending.append(json.dumps(data["lists"][name], ensure_ascii=False))
        for name in set(_RULE.findall(text)) - rules:
            if name in data["expansion_rules"]:
                rules.add(name)
                pending.append(data["expansion_rules"][name])
    return rules, lists


def handled(data: dict) -> dict:
    intents = {name: spec for name, spec in data["intents"].items() if name in HANDLED_INTENTS}
    rules, lists = used(data, intents)
    return {"language": data["language"], "intents": intents,
            "lists": {name: data["lists"][name] for name in sorted(lists)},
            "expansion_rules": {name: data["expansion_rules"][name] for name in sorted(rules)},
            "skip_words": data.get("skip_words", [])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("wheel", type=Path)
    args = parser.parse_args()
    codes = {code.lower(): code for code in get_languages()}
    OLDER_INTENTS.mkdir(exist_ok=True)
    for old in OLDER_INTENTS.glob("*.json.gz"):
        old.unlink()
    with zipfile.ZipFile(args.wheel) as wheel:
        for member in sorted(wheel.namelist()):
            match = re.fullmatch(r"home_assistant_intents/data/([^/]+)\.json", member)
            if not match or match.group(1).lower() not in codes:
                continue
            data = handled(json.loads(wheel.read(member)))
            target = OLDER_INTENTS / f"{codes[match.group(1).lower()]}.json.gz"
            with gzip.GzipFile(target, "wb", mtime=0) as out:  # mtime 0: the same bytes every run
                out.write(json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode())
            print(f"{target.name}: {len(data['intents'])} intents, {len(data['lists'])} lists, "
                  f"{len(data['expansion_rules'])} rules, {target.stat().st_size // 1024} KiB")


if __name__ == "__main__":
    main()
