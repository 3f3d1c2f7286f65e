"""`/v1/chat/completions` on a served hub: a client that leaves frees the model at once, a long
request is cut at turn_timeout (plain and streamed), and a request that cannot be done in time
behind a long one is refused at once with 503 busy, like the agent's turns."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import aiohttp
import pytest

from reliability.served_hub import ServedHub

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

TOKEN = "cutoff-token"
TURN_TIMEOUT = 10
COUNTING = "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,"  # the base 270M model goes on counting


def body(max_tokens: int, stream: bool = False) -> dict:
    return {"messages": [{"role": "user", "content": COUNTING}], "max_tokens": max_tokens, "stream": stream}


async def complete(session: aiohttp.ClientSession, url: str, max_tokens: int) -> tuple[int, dict, float]:
    started = time.monotonic()
    async with session.post(url, json=body(max_tokens)) as response:
        return response.status, await response.json(), time.monotonic() - started


async def test_chat_completions_are_cut_at_turn_timeout_freed_on_disconnect_and_refused_when_late(
        tmp_path: Path, gemma_path: Path) -> None:
    hub = ServedHub(tmp_path, gemma_path, {"api_token": TOKEN, "turn_timeout": TURN_TIMEOUT, "threads": 1,
                                           "n_ctx": 4096}).start()
    url = f"http://127.0.0.1:{hub.ports['http_port']}/v1/chat/completions"
    headers = {"Authorization": f"Bearer {TOKEN}"}
    # no deadline on the client side but the test's own bound: the hub must end things itself
    session = aiohttp.ClientSession(headers=headers, timeout=aiohttp.ClientTimeout(total=TURN_TIMEOUT + 20))
    try:
        for _ in range(3):  # the first request after start may meet a busy box
            status, _, _ = await complete(session, url, 4)
            if status == 200:
                break
        assert status == 200

        # a client that gives up frees the model at once: the next request does not wait for it
        left = asyncio.create_task(complete(session, url, 3000))
        await asyncio.sleep(2.0)
        left.cancel()  # closes its connection
        await asyncio.gather(left, return_exceptions=True)
        status, reply, took = await complete(session, url, 4)
        assert status == 200, reply
        # not the minutes of the abandoned generation (a loaded 2-core box takes seconds for a token)
        assert took < TURN_TIMEOUT, f"the request after a disconnect waited {took:.1f} s"

        # a long request is cut at turn_timeout with a clear error
        status, reply, took = await complete(session, url, 3000)
        assert status == 504 and reply["error"]["code"] == "timeout", reply
        assert TURN_TIMEOUT - 0.5 < took < TURN_TIMEOUT + 3, took

        # streamed: the chunks so far, then the error, then [DONE]
        started = time.monotonic()
        async with session.post(url, json=body(3000, stream=True)) as response:
            assert response.status == 200
            lines = [line.decode().strip() async for line in response.content if line.strip()]
        took = time.monotonic() - started
        assert took < TURN_TIMEOUT + 3, took
        assert lines[-1] == "data: [DONE]", lines[-3:]
        assert json.loads(lines[-2].removeprefix("data: "))["error"]["code"] == "timeout", lines[-2]
        assert any('"content"' in line for line in lines[1:-2]), "nothing was streamed before the cut"

        # behind a request that holds the model for turn_timeout, another cannot be done in time:
        # refused at once, as the agent's turns are
        long = asyncio.create_task(complete(session, url, 3000))
        await asyncio.sleep(1.0)
        status, reply, took = await complete(session, url, 3000)
        assert status == 503 and reply["error"]["code"] == "busy", reply
        assert took < 1.0, f"the busy answer took {took:.1f} s"
        status, reply, _ = await long
        assert status == 504, reply

        # and with the model free again, a request runs
        status, reply, _ = await complete(session, url, 4)
        assert status == 200, reply
    finally:
        await session.close()
        hub.stop()
    assert "Traceback" not in hub.log()
