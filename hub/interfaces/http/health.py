"""What `/health` shows, and to whom.

`/health` needs no token (the image's HEALTHCHECK and the page's warm-up poll it) and the API
listens on the whole LAN, so a client without the token sees the hub's state and figures only:
no repository, file name, message or absolute path (a private repository's name, the data
folder). The token (or Home Assistant's ingress) shows it all. Files of the state folder set
aside as damaged (hub.state_files) are listed by their name in that folder.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from hub.state_files import SetAside, set_aside_under

PUBLIC_DOWNLOAD = ("state", "bytes", "total_bytes", "rate_bps", "eta_s", "reason", "retrying")


def shown_startup(startup: dict[str, Any], *, full: bool) -> dict[str, Any]:
    """The warm-up's state; for a client without the token, the download without its names."""
    download = startup.get("download")
    if full or download is None:
        return startup
    return {**startup, "download": {k: v for k, v in download.items() if k in PUBLIC_DOWNLOAD}}


def set_aside_json(state_dir: Path, *, full: bool) -> list[dict[str, Any]]:
    """The state files set aside since the start: where each was and where its content is; with
    `full`, what was wrong and what the hub did instead."""
    return [_entry(entry, state_dir, full) for entry in set_aside_under(state_dir)]


def _entry(entry: SetAside, state_dir: Path, full: bool) -> dict[str, Any]:
    shown: dict[str, Any] = {"file": _within(entry.path, state_dir),
                             "copy": _within(entry.copy, state_dir) if entry.copy is not None else None}
    if full:
        shown.update(problem=entry.problem, outcome=entry.outcome,
                     at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(entry.at)))
    return shown


def _within(path: Path, folder: Path) -> str:
    return path.resolve().relative_to(folder.resolve()).as_posix()
