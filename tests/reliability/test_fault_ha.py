"""Fault: Home Assistant answering 500s, then unreachable, then silent, then back — during turns.

A real HA core (tests/ha/ha_harness.py, started once for this module) sits behind a FaultProxy;
the hub (HubApp: real HA backend, catalogue tools, fast path, scripted model) reaches HA only
through the proxy. Fast-path turns and model turns (the scripted model calls the real tools) say
the localized "can't reach Home Assistant" while HA fails, end by turn_timeout when HA hangs, and
work again once HA is back, with the registry reloaded over a new websocket.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Iterator

import pytest

from ha.ha_harness import ENTITY_PLACEMENT, HomeAssistantInstance
from hub.agent.types import TurnRequest, TurnResult
from hub.app import HubApp
from hub.config import validate
from hub.backends.ha.registry import HomeAssistantBackend
from hub.llm.types import GenerationRequest
from hub.locales import phrase

from helpers.scripted_engine import ScriptedEngine, call, text
from reliability.fault_proxy import FaultProxy

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

TURN_BOUND_S = 60.0  # no turn may take longer than this, whatever HA does
POWERS = [f"input_boolean.{e.split('.', 1)[1]}_power" for e in ENTITY_PLACEMENT if e.startswith(("light.", "switch."))]


@pytest.fixture(scope="module")
def home_assistant(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HomeAssistantInstance]:
    instance = HomeAssistantInstance(tmp_path_factory.mktemp("ha-faults"))
    instance.start()
    yield instance
    instance.stop()


@pytest.fixture
async def proxy(home_assistant: HomeAssistantInstance) -> AsyncIterator[FaultProxy]:
    await home_assistant.call_service("input_boolean", "turn_off", entity_id=POWERS)
    proxy = FaultProxy(home_assistant.port)
    await proxy.start()
    yield proxy
    await proxy.stop()


async def start_hub(tmp_path: Path, proxy: FaultProxy, token: str, engine: ScriptedEngine,
                    **options: Any) -> tuple[HubApp, HomeAssistantBackend]:
    config = validate({"ha_url": proxy.url, "ha_token": token, "data_dir": str(tmp_path / "state"),
                       "fast_path": True, "turn_timeout": 60, **options})
    app = HubApp(config, engine=engine)
    await app.start(listeners=False)
    [backend] = [c for c in app._started if isinstance(c, HomeAssistantBackend)]
    assert backend.status == "connected", backend.last_error
    return app, backend


async def ask(app: HubApp, words: str, language: str = "en", conversation: str | None = None) -> TurnResult:
    assert app.agent is not None
    request = TurnRequest(words, conversation_id=conversation, language=language)
    return await asyncio.wait_for(app.agent.ask(request), TURN_BOUND_S)


async def eventually(check: Callable[[], Any], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


def retried_after_failure(entity_id: str):
    """A model round that saw the tool fail with HA unavailable and tries once more."""
    def round_(request: GenerationRequest):
        result = request.messages[-1]
        assert result.role == "tool" and "backend_unavailable" in result.content, result.content
        return [call("turn_on", entity_id=entity_id)]
    return round_


async def test_turns_while_home_assistant_fails_and_comes_back(
        tmp_path: Path, proxy: FaultProxy, home_assistant: HomeAssistantInstance) -> None:
    engine = ScriptedEngine([
        [call("turn_on", entity_id="light.bedroom_lamp")], retried_after_failure("light.bedroom_lamp"),
        [call("turn_on", entity_id="light.bedroom_lamp")], retried_after_failure("light.bedroom_lamp"),
        [call("turn_on", entity_id="light.bedroom_lamp")], text(),
    ])
    app, backend = await start_hub(tmp_path, proxy, home_assistant.token, engine)
    unavailable_en = phrase("en", "error.ha_unavailable")
    try:
        # 1. HA answers 500 to every request
        await proxy.set_mode("error")
        fast = await ask(app, "Turn on the kitchen light")
        assert fast.path == "fast_path" and fast.reply == unavailable_en, fast
        assert [c.ok for c in fast.tool_calls] == [False]
        model = await ask(app, "Make the bedroom lamp cosy for reading", conversation="m1")
        assert model.path != "fast_path" and model.reply == unavailable_en, model
        assert proxy.errors_sent >= 3, "the failures came from HA's answers, not from somewhere else"

        # 2. HA unreachable: connections cut and refused
        await proxy.set_mode("down")
        await eventually(lambda: backend.status != "connected", 15, "the backend to notice HA is gone")
        assert app.store.get("light.kitchen_light") is not None, "the last known home stays meanwhile"
        fast = await ask(app, "Turn on the kitchen light")
        assert fast.reply == unavailable_en, fast
        german = await ask(app, "Mach die Bedroom Lamp gemütlich zum Lesen", language="de", conversation="m2")
        assert german.reply == phrase("de", "error.ha_unavailable"), german
        assert (await home_assistant.state("light.kitchen_light"))["state"] == "off"
        assert (await home_assistant.state("light.bedroom_lamp"))["state"] == "off"

        # 3. HA back: the registry reconnects and reloads, commands work again
        loads = backend.loads
        await home_assistant.call_service("input_boolean", "turn_on", entity_id="input_boolean.coffee_machine_power")
        await proxy.set_mode("pass")
        await asyncio.wait_for(backend.loaded.wait(), 60)
        assert backend.status == "connected" and backend.loads > loads
        assert app.store.get("switch.coffee_machine").state == "on", "a change made while away arrived"
        fast = await ask(app, "Turn on the kitchen light")
        assert fast.reply == phrase("en", "action.turned_on", name="Kitchen Light"), fast
        assert (await home_assistant.state("light.kitchen_light"))["state"] == "on"
        model = await ask(app, "Make the bedroom lamp cosy for reading", conversation="m1")
        assert model.ok and model.tool_calls[-1].ok, model
        assert (await home_assistant.state("light.bedroom_lamp"))["state"] == "on"
    finally:
        await app.stop()


async def test_silent_home_assistant_ends_the_turn_at_the_turn_timeout(
        tmp_path: Path, proxy: FaultProxy, home_assistant: HomeAssistantInstance) -> None:
    """HA accepts connections and never answers (hung, or a dead NAT entry): the turn ends with
    the spoken timeout, the conversation is free, and the next command works once HA answers."""
    app, backend = await start_hub(tmp_path, proxy, home_assistant.token, ScriptedEngine([]), turn_timeout=4)
    try:
        await proxy.set_mode("blackhole")
        hung = await ask(app, "Turn on the kitchen light", conversation="c")
        assert (hung.ok, hung.error) == (False, "timeout")
        assert hung.reply == phrase("en", "error.timeout")
        await proxy.set_mode("pass")
        again = await ask(app, "Turn on the kitchen light", conversation="c")
        assert again.reply == phrase("en", "action.turned_on", name="Kitchen Light"), again
        assert (await home_assistant.state("light.kitchen_light"))["state"] == "on"
        assert backend.status == "connected"
    finally:
        await app.stop()


@pytest.mark.parametrize("language,command,chat", [
    ("en", "Turn on the kitchen light", "Make the bedroom lamp cosy for reading"),
    ("de", "Schalte das Licht in der Küche ein", "Mach die Bedroom Lamp gemütlich zum Lesen"),
    ("fr", "Allume la lumière de la cuisine", "Rends la Bedroom Lamp confortable pour lire"),
])
async def test_home_assistant_500_is_a_sentence_of_the_language(
        tmp_path: Path, proxy: FaultProxy, home_assistant: HomeAssistantInstance, language: str, command: str,
        chat: str) -> None:
    """HA answering 500 to a fast-path command and to the model's call is said in the request's
    language (issue 16's fault table), never as the backend's text."""
    engine = ScriptedEngine([[call("turn_on", entity_id="light.bedroom_lamp")],
                             retried_after_failure("light.bedroom_lamp"), text()])
    app, _ = await start_hub(tmp_path, proxy, home_assistant.token, engine)
    try:
        await proxy.set_mode("error")
        fast = await ask(app, command, language=language)
        model = await ask(app, chat, language=language, conversation="m")
        for result in (fast, model):
            assert result.reply == phrase(language, "error.ha_unavailable"), result
            assert "HTTP" not in result.reply and "{" not in result.reply
        assert fast.path == "fast_path" and model.path != "fast_path"
        assert proxy.errors_sent >= 3
    finally:
        await app.stop()
