"""The whole hub, restarted on the same data folder, answers its first model turn warm (issue 20.1).

The first run primes the default persona's prefix (instructions, tools, the demo home) and keeps
it on disk; the second run's first turn comes at once, before its own priming could finish, and
evaluates only what follows the prefix. Checked by evaluated-token counts with SmolLM2.
"""

from __future__ import annotations

import asyncio
import socket
import time
from pathlib import Path

import pytest

from hub.agent.types import TurnRequest
from hub.app import HubApp
from hub.config import validate

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

QUESTION = "Tell me a short joke about cats."  # no home command: the model answers


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def hub_on(folder: Path, model: Path) -> HubApp:
    return HubApp(validate({"data_dir": str(folder), "model_path": str(model), "n_ctx": 4096, "max_tokens": 16,
                            "temperature": 0.0, "turn_timeout": 300, "threads": 1, "mqtt_port": free_port()}))


async def test_the_first_model_turn_after_a_restart_evaluates_only_what_follows_the_prefix(
        tmp_path: Path, smollm_path: Path) -> None:
    first = hub_on(tmp_path, smollm_path)
    await first.start(listeners=False)
    try:
        deadline = time.monotonic() + 300
        while first.agent.priming.primer.primed_key is None:
            assert time.monotonic() < deadline, "the hub never primed its prefix"
            await asyncio.sleep(0.2)
        await first.engine.wait_idle()  # the primed state is on disk
        cold = await first.agent.ask(TurnRequest(QUESTION, conversation_id="before"))
    finally:
        await first.stop()
    assert list((tmp_path / "prefix_states").glob("*.kvstate"))

    second = hub_on(tmp_path, smollm_path)
    await second.start(listeners=False)
    try:
        warm = await second.agent.ask(TurnRequest(QUESTION, conversation_id="after"))  # at once
    finally:
        await second.stop()
    assert warm.timings.model.prompt_tokens == cold.timings.model.prompt_tokens > 500
    # the primed first run's own turn is the yardstick: the restart does as well as a warm turn
    assert warm.timings.model.evaluated_prompt_tokens == cold.timings.model.evaluated_prompt_tokens < 60, (cold.timings,
                                                                                               warm.timings)
