"""Invisible format characters (zero-width spaces and joiners, soft hyphens, BOMs) inside a
command's words are dropped before the turn: the fast path carries the command out and the
model is never asked (issue #30, item 9; 0.6.0 sent these to the model)."""

from __future__ import annotations

import pytest

from agent.test_languages import DemoHub
from hub.agent.types import TurnRequest, without_format_characters

pytestmark = pytest.mark.timeout(120)


def test_only_format_characters_go() -> None:
    assert without_format_characters("kit\u200bchen\u00ad li\u200dght\ufeff") == "kitchen light"
    assert without_format_characters("Küche 🙂 ok") == "Küche 🙂 ok"


@pytest.mark.parametrize("text", [
    "turn on the kit\u200bchen light",
    "\ufeffturn on the kitchen\u2060 light",
    "turn on the ki\u00adtchen li\u200cght",
])
async def test_a_command_with_zero_width_characters_takes_the_fast_path(text: str) -> None:
    hub = DemoHub()  # no scripted rounds: the model must not be asked
    result = await hub.agent.ask(TurnRequest(text, language="en", source="rest"))
    assert result.ok and result.path == "fast_path", result.reply
    assert dict(hub.states())["light.kitchen"] == "on"
    assert hub.engine.requests == []
