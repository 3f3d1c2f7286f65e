"""`names.json`, the name book's file (hub.home.name_book), read back entry by entry.

A name the book would refuse now (over the length limit, invisible) or an entry of the wrong shape
is left out, not the whole file. A file that is no longer JSON (cut short, edited by hand) keeps
what matters most for safety: the untargeted list. It is written first, so a cut file usually
still holds it whole; when it does not, every entity the file names is untargeted until the
user targets it again (on the Names page), and a file that cannot be read at all untargets every
entity: a damaged file never makes an untargeted device actionable again.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable, Literal

from hub.home.entities import MAX_ALIASES
from hub.state_files import JsonStateFile, Reading

Kind = Literal["entity", "area", "floor"]
KINDS: tuple[Kind, ...] = ("entity", "area", "floor")
NAMES_FILE = "names.json"
EVERY_ENTITY = "*"  # untargeted: the file could not be read, so no entity is safe to act on
_UNTARGETED_LIST = re.compile(r'"untargeted"\s*:\s*\[(?P<items>[^\]]*)(?P<end>\]?)')
_ENTITY_ID = re.compile(r'"([a-z0-9_]+\.[a-z0-9_]+)"')


def empty_names() -> dict[str, Any]:
    """The book's data with nothing in it; `untargeted` first, so a cut file keeps it."""
    return {"version": 1, "untargeted": [], **{kind: {} for kind in KINDS}}


def names_file(path: Path, clean: Callable[[str], str]) -> JsonStateFile[dict[str, Any]]:
    """The file at `path`; `clean` keeps a name as the book does (NameRefused, a ValueError, if
    it would not take it now)."""
    return JsonStateFile(path, lambda saved: _read(saved, clean), _salvage, lambda data: data)


def _read(saved: Any, clean: Callable[[str], str]) -> Reading[dict[str, Any]]:
    if not isinstance(saved, dict) or not isinstance(saved.get("untargeted", []), list):
        raise ValueError("no untargeted list")  # salvaged from the text: the safe reading
    data, problems = empty_names(), []
    data["untargeted"] = sorted({str(i) for i in saved.get("untargeted", [])})
    for kind in KINDS:
        entries = saved.get(kind, {})
        if not isinstance(entries, dict):
            problems.append(f"the {kind} names are not a mapping")
            continue
        for target, entry in entries.items():
            kept = _entry(entry, clean)
            if kept is None:
                problems.append(f"the names of {target} could not be read")
                continue
            if len(kept["added"]) != len(entry.get("added", [])):
                problems.append(f"a name of {target} was left out (too long, empty or one too many)")
            data[kind][str(target)] = kept
    outcome = "every name it could read is kept; the untargeted list is whole"
    return Reading(data, tuple(problems), outcome)


def _entry(entry: Any, clean: Callable[[str], str]) -> dict[str, list[str]] | None:
    if not isinstance(entry, dict) or not all(isinstance(entry.get(k, []), list) for k in ("added", "removed")):
        return None
    added: list[str] = []
    for name in entry.get("added", []):
        try:
            added.append(clean(str(name)))
        except ValueError:
            continue
    return {"added": added[:MAX_ALIASES], "removed": [str(n) for n in entry.get("removed", [])]}


def _salvage(text: str | None) -> Reading[dict[str, Any]]:
    """The untargeted list out of a damaged file's text: the whole list when it is there, else
    every entity id the text names; every entity when nothing could be read."""
    data = empty_names()
    if text is None:
        data["untargeted"] = [EVERY_ENTITY]
        return Reading(data, ("unreadable",), "no entity is acted on until the file can be read")
    found = _UNTARGETED_LIST.search(text)
    if found is not None and found["end"]:
        data["untargeted"] = sorted(set(_ENTITY_ID.findall(found["items"])))
        return Reading(data, ("unreadable",), "its untargeted list is kept whole; its names are in the "
                                              "copy (add them again on the Names page)")
    data["untargeted"] = sorted(set(_ENTITY_ID.findall(text)))
    return Reading(data, ("unreadable",), "every entity it named is untargeted until you target it again "
                                          "on the Names page; its names are in the copy")
