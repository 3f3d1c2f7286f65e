"""A real Agent whose one tool never returns: a turn that calls it ends only at turn_timeout."""

from __future__ import annotations

import asyncio
from typing import Any

from hub.agent.agent import Agent
from hub.config import validate
from hub.options import hub_options
from hub.core.tools import ToolContext, ToolRegistry, ToolResult, ToolTraits
from hub.core.messages import ToolSpec
from hub.settings import RuntimeSettings

from helpers.scripted_engine import ScriptedEngine


class HangingTool(ToolTraits):
    """Awaits forever; notes when it started and when it was cancelled."""

    spec = ToolSpec("wait_for_garage", "Wait until the garage reports back",
                    {"type": "object", "properties": {}, "additionalProperties": False})

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.cancelled = asyncio.Event()

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        self.started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        raise AssertionError("unreachable")  # pragma: no cover


def make_agent(engine: ScriptedEngine, turn_timeout: int) -> tuple[Agent, HangingTool]:
    config = validate({"fast_path": False, "turn_timeout": turn_timeout})
    registry = ToolRegistry()
    tool = HangingTool()
    registry.register(tool)
    agent = Agent(engine=engine, registry=registry, settings=RuntimeSettings(hub_options(config).settings), options=hub_options(config).agent,
                  clock_text=lambda: "Monday 2026-11-30 08:00")
    return agent, tool
