"""A command whose every action failed (its backend is down) is a failed turn: `ok` is false and
the error names why, beside the spoken apology; a refusal or a held action is no failure
(issue #30, item 9: with the broker down /api/ask said `"ok": true`)."""

from __future__ import annotations

import pytest

from agent.test_languages import DemoHub
from hub.agent.types import TurnRequest

pytestmark = pytest.mark.timeout(120)


async def test_a_command_whose_backend_is_down_is_not_ok() -> None:
    hub = DemoHub()
    hub.backend.online = False
    result = await hub.agent.ask(TurnRequest("turn on the kitchen light", language="en", source="rest"))
    assert result.path == "fast_path"
    assert not result.ok and result.error == "backend_unavailable"
    assert result.reply and dict(hub.states())["light.kitchen"] == "off"
    assert [call.ok for call in result.tool_calls] == [False]


async def test_a_command_that_worked_and_a_held_one_stay_ok() -> None:
    hub = DemoHub()
    done = await hub.agent.ask(TurnRequest("turn on the kitchen light", language="en", source="rest"))
    assert done.ok and done.error is None
    held = await hub.agent.ask(TurnRequest("unlock the front door", language="en", source="rest"))
    assert held.ok and held.error is None
