"""A hub restarted at once gets its embedded broker and its MQTT demo home back (issue #17 point 11).

When the hub dies, the broker's side of each client connection closes first and sits in
TIME_WAIT for about 60 s. The restarted hub must bind its port anyway (SO_REUSEADDR), and must
never go on quietly with a different home.
"""

from __future__ import annotations

import asyncio
import errno
import socket
import time
from pathlib import Path

import pytest

from mqtt.mqtt_helpers import Sniffer
from reliability.served_hub import ServedHub, free_port

pytestmark = pytest.mark.timeout(300)

AVAILABILITY = "bolt_hub/bolt_hub/availability"


def bind_fails_without_reuse(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as err:
            return err.errno == errno.EADDRINUSE
    return False


async def wait_for_log(hub: ServedHub, text: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while text not in hub.log():
        assert hub.process.poll() is None, f"the hub exited:\n{hub.log()[-3000:]}"
        assert time.monotonic() < deadline, f"no {text!r} in the log:\n{hub.log()[-3000:]}"
        await asyncio.sleep(0.2)


async def test_a_hub_restarted_at_once_gets_its_broker_and_demo_home_back(tmp_path: Path, smollm_path: Path) -> None:
    port = free_port()
    for name in ("first", "second"):
        (tmp_path / name).mkdir()
    first = ServedHub(tmp_path / "first", smollm_path, {"mqtt_port": port}).start()
    second = None
    automation = None
    try:
        await wait_for_log(first, "using the MQTT demo home")
        automation = await asyncio.to_thread(Sniffer, port, [AVAILABILITY])  # a client of the embedded broker
        await automation.wait_for(AVAILABILITY, lambda p: p == b"online", timeout=30)
        first.stop()  # SIGKILL: the broker's connections close from its side
        assert bind_fails_without_reuse(port), "no TIME_WAIT on the port: the test shows nothing"

        second = ServedHub(tmp_path / "second", smollm_path, {"mqtt_port": port}).start()
        log = second.log()  # the home is chosen before the HTTP port opens, which start() waits for
        assert "using the MQTT demo home" in log, log
        assert f"embedded MQTT broker listening on 127.0.0.1:{port}" in log
        assert "in-memory demo home" not in log and "MQTT is off" not in log
    finally:
        if automation is not None:
            await asyncio.to_thread(automation.close)
        first.stop()
        if second is not None:
            second.stop()


def test_a_port_held_by_another_program_stops_the_hub_with_a_clear_error(tmp_path: Path, smollm_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        hub = ServedHub(tmp_path, smollm_path, {"mqtt_port": port}).start(wait=False)
        try:
            assert hub.process.wait(120) == 2, hub.log()
        finally:
            hub.stop()
    log = hub.log()
    assert f"bolt-hub: mqtt_port: the embedded MQTT broker cannot start: port 127.0.0.1:{port} is taken" in log
    assert "in-memory demo home" not in log and "Traceback" not in log
