"""Personas in the turn loop (scripted engine: the logic of choosing and scoping, not taste)."""

from __future__ import annotations

from typing import Any

import pytest

from hub.agent.agent import Agent
from hub.agent.personas import Persona, PersonaBook, UnknownPersona, home_persona
from hub.agent.prompt import ASSISTANT_INSTRUCTIONS
from hub.agent.types import TurnRequest
from hub.config import validate
from hub.options import hub_options
from hub.core.tools import ToolContext, ToolRegistry, ToolResult, ToolTraits
from hub.core.messages import ToolSpec
from hub.llm.types import GenerationRequest, Reasoning, ReasoningMode
from hub.settings import RuntimeSettings

from helpers.scripted_engine import ScriptedEngine, call, text

SMITH = Persona(key="smith", name="Brom", instructions="You are Brom, a gruff blacksmith.",
                language="de", conversational=False, reasoning=Reasoning(ReasoningMode.BUDGET, 32),
                tools=("forge",), greeting="Welcome to my forge!", satellites=("npc-1",))
ROBOT = Persona(key="robot", name="Robo", instructions="You are a small robot.", tools=("wave",))


class CountingTool(ToolTraits):
    def __init__(self, name: str) -> None:
        self.spec = ToolSpec(name, f"The {name} tool", {"type": "object", "properties": {}})
        self.calls: list[ToolContext] = []

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        self.calls.append(ctx)
        return ToolResult(ok=True, data={"done": self.spec.name}, speech=f"{self.spec.name} done.")


def make(engine: ScriptedEngine) -> tuple[Agent, dict[str, CountingTool]]:
    config = validate({"fast_path": False, "language": "en"})
    registry = ToolRegistry()
    tools = {name: CountingTool(name) for name in ("lamp", "forge", "wave")}
    for tool in tools.values():
        registry.register(tool)
    book = PersonaBook(home_persona(ASSISTANT_INSTRUCTIONS), [SMITH, ROBOT], home_tools=["lamp"])
    agent = Agent(engine=engine, registry=registry, settings=RuntimeSettings(hub_options(config).settings), options=hub_options(config).agent,
                  personas=book, clock_text=lambda: "Monday 2026-11-30 08:00")
    return agent, tools


def tool_names(request: GenerationRequest) -> list[str]:
    return [t.name for t in request.tools]


async def test_a_named_persona_gets_its_instructions_tools_language_and_modes() -> None:
    engine = ScriptedEngine([text("Ja.")])
    agent, _ = make(engine)
    result = await agent.ask(TurnRequest("Hast du ein Schwert?", persona="smith"))
    request = engine.requests[0]
    assert result.ok and result.language == "de"
    assert request.messages[0].content.startswith("You are Brom")
    assert ASSISTANT_INSTRUCTIONS not in request.messages[0].content
    assert tool_names(request) == ["forge"]
    assert request.conversational is False and request.reasoning == Reasoning(ReasoningMode.BUDGET, 32)


async def test_the_default_persona_is_the_home_assistant_with_the_home_tools() -> None:
    engine = ScriptedEngine([text("Sure.")])
    agent, _ = make(engine)
    await agent.ask(TurnRequest("hello"))
    assert engine.requests[0].messages[0].content.startswith(ASSISTANT_INSTRUCTIONS)
    assert tool_names(engine.requests[0]) == ["lamp"]


async def test_a_satellite_mapped_to_a_persona_talks_to_it_and_follow_ups_keep_it() -> None:
    engine = ScriptedEngine([text("Hm."), text("Ja.")])
    agent, _ = make(engine)
    first = await agent.ask(TurnRequest("hallo", satellite_id="npc-1"))
    await agent.ask(TurnRequest("und jetzt?", conversation_id=first.conversation_id))
    assert [tool_names(r) for r in engine.requests] == [["forge"], ["forge"]]


async def test_a_persona_cannot_call_another_personas_tool_even_when_the_model_tries() -> None:
    engine = ScriptedEngine([[call("lamp")], text("I can't do that.")])
    agent, tools = make(engine)
    result = await agent.ask(TurnRequest("light the lamp", persona="robot"))
    assert tools["lamp"].calls == []
    assert result.tool_calls[0].data["error"] == "tool_not_allowed"
    assert "lamp" not in str(result.tool_calls[0].data["available"])


async def test_the_personas_own_tool_runs_with_the_persona_in_its_context() -> None:
    engine = ScriptedEngine([[call("wave")], text("I waved.")])
    agent, tools = make(engine)
    await agent.ask(TurnRequest("wave!", persona="robot"))
    assert [ctx.persona for ctx in tools["wave"].calls] == ["robot"]


async def test_an_unknown_persona_is_refused_without_the_model() -> None:
    engine = ScriptedEngine([])
    agent, _ = make(engine)
    result = await agent.ask(TurnRequest("hello", persona="dragon"))
    assert not result.ok and result.error == "unknown_persona"
    assert result.reply == "Sorry, I don't know that character."
    assert engine.requests == []


async def test_direct_calls_are_scoped_by_persona_like_the_models_calls() -> None:
    agent, tools = make(ScriptedEngine([]))
    refused = await agent.call_tool("forge", {}, ToolContext("c1", "en", "mqtt", persona="robot"))
    allowed = await agent.call_tool("forge", {}, ToolContext("c1", "en", "mqtt", persona="smith"))
    assert refused.data["error"] == "tool_not_allowed" and allowed.ok
    assert len(tools["forge"].calls) == 1
    with pytest.raises(UnknownPersona):
        await agent.call_tool("forge", {}, ToolContext("c1", "en", "mqtt", persona="dragon"))


async def test_a_greeting_opens_the_conversation_and_the_model_sees_it() -> None:
    engine = ScriptedEngine([text("Gut.")])
    agent, _ = make(engine)
    greeting = agent.greet("smith")
    assert greeting.reply == "Welcome to my forge!"
    await agent.ask(TurnRequest("Ein Schwert bitte", conversation_id=greeting.conversation_id))
    assert [m.content for m in engine.requests[0].messages[1:2]] == ["Welcome to my forge!"]


async def test_each_persona_has_its_own_stable_prefix() -> None:
    agent, _ = make(ScriptedEngine([]))
    home, smith = agent.stable_request(), agent.stable_request(SMITH)
    assert home.messages[0].content != smith.messages[0].content
    assert tool_names(smith) == ["forge"] and tool_names(home) == ["lamp"]
    assert agent.stable_request(SMITH) == smith  # byte-identical from turn to turn
