"""A served hub started while Home Assistant cannot be reached; a real HA appears later.

The hub starts anyway and answers; its HA connection retries in the background (the backoff of
hub.backends.ha.registry) and loads the home once HA answers, without a restart. When HA goes
away again, a command gets the clear "can't reach Home Assistant" reply.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from ha.ha_harness import HomeAssistantInstance, TcpProxy
from hub.locales import phrase
from reliability.served_hub import ServedHub, wyoming_turn

pytestmark = [pytest.mark.slow, pytest.mark.timeout(480)]

TOKEN = "ha-late-test-token"


async def entities(hub: ServedHub) -> list[dict[str, Any]]:
    url = f"http://127.0.0.1:{hub.ports['http_port']}/api/entities"
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"}) as session:
        async with session.get(url, timeout=aiohttp.ClientTimeout(total=30)) as response:
            assert response.status == 200, await response.text()
            body = await response.json()
    return body["entities"] if isinstance(body, dict) else body


async def test_hub_started_before_home_assistant_loads_the_home_when_it_appears(tmp_path: Path, gemma_path: Path) -> None:
    ha = HomeAssistantInstance(tmp_path / "ha")
    await asyncio.to_thread(ha.start)
    proxy = TcpProxy(ha.port)  # not listening yet: for the hub, HA is not up
    hub = ServedHub(tmp_path, gemma_path, {"ha_url": proxy.url, "ha_token": ha.token, "api_token": TOKEN,
                                           "max_tokens": 32})
    try:
        hub.start()  # returns once HTTP listens: the hub came up without its HA
        assert "light.kitchen_light" not in {e["entity_id"] for e in await entities(hub)}
        # its other parts work meanwhile
        answer = await wyoming_turn(hub.ports["wyoming_port"], "what is the capital of france", "model", "hall",
                                    timeout=180)
        assert answer.outcome == "handled" and answer.text.strip(), answer

        await proxy.start()  # HA appears
        deadline = time.monotonic() + 150  # the retry backoff grows to 60 s
        while "light.kitchen_light" not in {e["entity_id"] for e in await entities(hub)}:
            assert time.monotonic() < deadline, "the hub never loaded HA's entities:\n" + hub.log()[-3000:]
            await asyncio.sleep(1)
        on = await wyoming_turn(hub.ports["wyoming_port"], "turn on the kitchen light", "fast", "kitchen", timeout=180)
        assert on.outcome == "handled", on
        await ha.wait_for_state("light.kitchen_light", "on", timeout=30)

        await proxy.pause()  # HA goes away again: the hub says so, clearly
        off = await wyoming_turn(hub.ports["wyoming_port"], "turn off the kitchen light", "fast", "kitchen", timeout=180)
        assert off.text == phrase("en", "error.ha_unavailable"), off
        assert hub.process.poll() is None
    finally:
        await proxy.stop()
        hub.stop()
        await asyncio.to_thread(ha.stop)
    assert "Traceback" not in hub.log()
