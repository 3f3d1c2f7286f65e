"""llama-cpp-python's own OpenAI-compatible server (`llama_cpp.server`, from its `[server]` extra)
on a free loopback port, for tests and benches of the remote engine. Started through
`hub.llm.serve_model`: without llama.cpp's extra buffer types where they fail, as the engine loads."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # this checkout's `hub`, for the server process


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LlamaCppServer:
    def __init__(self, model: Path, *, n_ctx: int = 2048, log: Path | None = None, extra: tuple[str, ...] = ()) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self._log = open(log, "wb") if log else subprocess.DEVNULL  # noqa: SIM115 (closed in stop)
        path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
        self._process = subprocess.Popen(
            [sys.executable, "-m", "hub.llm.serve_model", "--model", str(model), "--host", "127.0.0.1",
             "--port", str(self.port), "--n_ctx", str(n_ctx), *extra],
            stdout=self._log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONPATH": path})

    def wait_ready(self, timeout: float = 180) -> "LlamaCppServer":
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited with {self._process.returncode}")
            try:
                with urllib.request.urlopen(self.url + "/models", timeout=2) as response:
                    if response.status == 200:
                        return self
            except OSError:
                time.sleep(0.5)
        self.stop()
        raise TimeoutError("llama_cpp.server did not start")

    def stop(self) -> None:
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(20)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(10)
        if self._log is not subprocess.DEVNULL:
            self._log.close()
