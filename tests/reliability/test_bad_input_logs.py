"""Bad input is a warning line, not a traceback (issue #30 item 7), on a real served hub: a request
line of 10,000 characters gets its 400 and the log says so in one warning, and the hub answers on."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
import pytest

from reliability.served_hub import ServedHub

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


async def test_a_10000_character_path_is_one_warning_and_the_hub_answers_on(tmp_path: Path, smollm_path: Path):
    hub = ServedHub(tmp_path, smollm_path, {"api_token": "bad-input-token"}).start()
    try:
        port = hub.ports["http_port"]
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /" + b"a" * 10_000 + b" HTTP/1.1\r\nHost: hub\r\n\r\n")
        await writer.drain()
        status_line = (await asyncio.wait_for(reader.readline(), 30)).decode()
        writer.close()
        assert " 400 " in status_line
        async with aiohttp.ClientSession() as session:
            async with session.get(f"http://127.0.0.1:{port}/health") as response:
                assert response.status == 200
        await asyncio.sleep(0.5)  # the server logs after it answered
        log = hub.log()
        assert "LineTooLong" in log and "answered 400" in log
        assert "Traceback" not in log
        assert not [line for line in log.splitlines() if " ERROR aiohttp" in line]
    finally:
        hub.stop()
