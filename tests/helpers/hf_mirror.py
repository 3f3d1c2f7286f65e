"""A local HTTP server that answers like the Hugging Face hub, for `HF_ENDPOINT`.

`HEAD /<owner>/<name>/resolve/<revision>/<file>` answers as huggingface.co does for an LFS file: a
302 to the CDN (`Location`, the same server as `localhost`) with `X-Repo-Commit`, `X-Linked-Etag` (the sha256), `X-Linked-Size` and
`ETag`; `GET` redirects the same way, and the CDN path serves the bytes with `Range` (206 and
`Content-Range`). A repository may need a token (401 `GatedRepo` without one, 403 with a wrong
one); an unknown file is a 404 `EntryNotFound`. Faults on demand: `cut_after` closes the first
GET's connection after so many bytes, `wrong_sha256` announces another checksum, `announced_size`
another size, and `hold` pauses the body after `hold_after` bytes until released.
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest

COMMIT = "0123456789abcdef0123456789abcdef01234567"
_RESOLVE = re.compile(r"^/(?P<repo>[^/]+/[^/]+)/resolve/(?P<revision>[^/]+)/(?P<file>.+)$")
_CDN = re.compile(r"^/cdn/(?P<sha>[0-9a-f]{64})$")


@dataclass
class Served:
    path: Path
    token: str | None = None  # needed (a gated repository)
    wrong_sha256: bool = False
    announced_size: int | None = None  # instead of the true size
    cut_after: int | None = None  # the first GET ends after this many bytes, connection closed
    hold_after: int | None = None  # the body pauses here until `release()`
    sha256: str = ""
    size: int = 0

    def __post_init__(self) -> None:
        digest = hashlib.sha256()
        with self.path.open("rb") as file:
            while chunk := file.read(1 << 20):
                digest.update(chunk)
        self.sha256 = digest.hexdigest()
        self.size = self.path.stat().st_size


@dataclass
class HfMirror:
    files: dict[str, Served] = field(default_factory=dict)  # "owner/name/file" -> what is served
    requests: list[tuple[str, str, str | None, str | None]] = field(default_factory=list)  # method, path, Range, auth
    released: threading.Event = field(default_factory=threading.Event)
    _server: ThreadingHTTPServer | None = None

    def serve(self, repo: str, filename: str, served: Served) -> None:
        self.files[f"{repo}/{filename}"] = served

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def cdn_url(self) -> str:
        """The same server under another host name: as huggingface.co's CDN, a redirect there is
        not followed by the HEAD (the metadata is on the redirect) and gets no token."""
        assert self._server is not None
        return f"http://localhost:{self._server.server_address[1]}"

    def release(self) -> None:
        self.released.set()

    def start(self) -> "HfMirror":
        mirror = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                return None

            def do_HEAD(self) -> None:
                mirror._answer(self, body=False)

            def do_GET(self) -> None:
                mirror._answer(self, body=True)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True, name="hf-mirror").start()
        return self

    def stop(self) -> None:
        self.released.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def gets(self) -> list[tuple[str, str, str | None, str | None]]:
        return [r for r in self.requests if r[0] == "GET" and r[1].startswith("/cdn/")]

    # --- answers ------------------------------------------------------------------------------

    def _answer(self, handler: BaseHTTPRequestHandler, *, body: bool) -> None:
        auth = handler.headers.get("Authorization")
        self.requests.append((handler.command, handler.path, handler.headers.get("Range"), auth))
        if match := _CDN.match(handler.path):
            served = next((s for s in self.files.values() if s.sha256 == match["sha"]), None)
            if served is None:
                return _status(handler, 404, {})
            return self._bytes(handler, served, body)
        match = _RESOLVE.match(handler.path)
        served = self.files.get(f"{match['repo']}/{match['file']}") if match else None
        if match is None or served is None:
            return _status(handler, 404, {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": COMMIT})
        if served.token is not None and auth != f"Bearer {served.token}":
            code = 401 if auth is None else 403
            return _status(handler, code, {"X-Error-Code": "GatedRepo", "X-Error-Message":
                                           "Access to this model is restricted; you must be authenticated."})
        sha = hashlib.sha256(b"something else").hexdigest() if served.wrong_sha256 else served.sha256
        _status(handler, 302, {
            "Location": f"{self.cdn_url}/cdn/{served.sha256}", "X-Repo-Commit": COMMIT, "X-Linked-Etag": f'"{sha}"',
            "X-Linked-Size": str(served.announced_size or served.size), "ETag": '"git-blob-etag"'})

    def _bytes(self, handler: BaseHTTPRequestHandler, served: Served, body: bool) -> None:
        start = 0
        if (wanted := handler.headers.get("Range")) and (found := re.match(r"bytes=(\d+)-", wanted)):
            start = int(found[1])
        data_length = served.size - start
        handler.send_response(206 if start else 200)
        handler.send_header("Content-Length", str(data_length))
        handler.send_header("Accept-Ranges", "bytes")
        handler.send_header("ETag", f'"{served.sha256}"')
        if start:
            handler.send_header("Content-Range", f"bytes {start}-{served.size - 1}/{served.size}")
        handler.end_headers()
        if not body:
            return
        first_get = sum(1 for r in self.requests if r[0] == "GET" and r[1].startswith("/cdn/")) == 1
        cut = served.cut_after if first_get else None
        sent = start
        with served.path.open("rb") as file:
            file.seek(start)
            while chunk := file.read(1 << 16):
                if served.hold_after is not None and sent >= served.hold_after:
                    chunk, sent = self._trickle(handler, chunk, sent)
                if cut is not None and sent + len(chunk) > cut:
                    handler.wfile.write(chunk[: cut - sent])
                    handler.wfile.flush()
                    handler.close_connection = True
                    handler.connection.close()
                    return
                try:
                    handler.wfile.write(chunk)
                except (BrokenPipeError, ConnectionResetError):
                    return
                sent += len(chunk)


    def _trickle(self, handler: BaseHTTPRequestHandler, chunk: bytes, sent: int) -> tuple[bytes, int]:
        """Until released (at most two minutes), a byte every second: the body stalls, yet no
        read times out, so the client's retries never run out however slow the machine."""
        deadline = time.monotonic() + 120
        while not self.released.wait(1) and time.monotonic() < deadline and len(chunk) > 1:
            try:
                handler.wfile.write(chunk[:1])
                handler.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                break
            chunk, sent = chunk[1:], sent + 1
        return chunk, sent


def _status(handler: BaseHTTPRequestHandler, code: int, headers: dict[str, str]) -> None:
    handler.send_response(code)
    for name, value in headers.items():
        handler.send_header(name, value)
    handler.send_header("Content-Length", "0")
    handler.end_headers()


REPO, FILE = "nvidia/bolt-test-GGUF", "bolt-Q4_K_M.gguf"  # the tests' model on the mirror


@pytest.fixture
def mirror(monkeypatch: pytest.MonkeyPatch) -> Iterator[HfMirror]:
    """A mirror of the Hugging Face hub that huggingface_hub is pointed at (HF_ENDPOINT)."""
    served = HfMirror().start()
    monkeypatch.setenv("HF_ENDPOINT", served.url)
    yield served
    served.stop()


@pytest.fixture
def small_gguf(tmp_path: Path) -> Path:
    """A few MB that start like a GGUF (the checks read the header, size and sha256, not the tensors)."""
    path = tmp_path / "served" / "small.gguf"
    path.parent.mkdir()
    path.write_bytes(b"GGUF" + bytes(range(256)) * 12_000)
    return path
