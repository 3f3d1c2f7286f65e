"""Conversational mode and reasoning through the real agent with a scripted engine: what the
model is asked for, how a template's conversational variable and the instruction agree, and
that a markdown reply or thinking never reaches what is spoken. (Real-model counterpart:
test_modes_real_model.py.)"""

from __future__ import annotations

import re
from typing import Any, AsyncIterator

import pytest

from hub.agent.agent import Agent
from hub.agent.prompt import CONVERSATIONAL_INSTRUCTIONS, WRITTEN_INSTRUCTIONS
from hub.agent.types import ReplyChunk, TurnDone, TurnRequest
from hub.config import validate
from hub.options import hub_options
from hub.core.tools import ToolRegistry
from hub.llm.template_format import TemplateChatFormat
from hub.llm.types import Delta, GenerationRequest, Reasoning, ReasoningMode, TextDelta, ThinkingDelta
from hub.settings import RuntimeSettings
from helpers.scripted_engine import ScriptedEngine, text

pytestmark = pytest.mark.timeout(30)

MARKDOWN_REPLY = [
    "Here are three ways to save energy:\n\n",
    "1. **Close** the win", "dows at night\n",
    "2. Turn *down* the heating to 19°C\n",
    "- Use [LED bulbs](https://example.com/led) 💡\n\n",
    "## In short\n", "You can save up to 20% ✅",
]
# The shape of a template that declares a conversational switch (Bolt-style).
CHATTY_TEMPLATE = (
    "{% if conversational_mode %}[SPOKEN]{% else %}[WRITTEN]{% endif %}"
    "{% for m in messages %}<{{ m.role }}>{{ m.content }}</{{ m.role }}>{% endfor %}"
    "{% if add_generation_prompt %}<assistant>{% endif %}"
)


def make_agent(engine: Any, **options: Any) -> tuple[Agent, RuntimeSettings]:
    config = validate({"fast_path": False, **options})
    settings = RuntimeSettings(hub_options(config).settings)
    agent = Agent(engine=engine, registry=ToolRegistry(), settings=settings, options=hub_options(config).agent,
                  clock_text=lambda: "Monday 2026-11-30 08:00")
    return agent, settings


async def events_of(agent: Agent, request: TurnRequest) -> tuple[list[str], Any]:
    chunks, result = [], None
    async for event in agent.run(request):
        if isinstance(event, ReplyChunk):
            chunks.append(event.text)
        elif isinstance(event, TurnDone):
            result = event.result
    return chunks, result


async def test_markdown_list_reply_is_spoken_as_plain_sentences() -> None:
    agent, _ = make_agent(ScriptedEngine([text(*MARKDOWN_REPLY)]), max_reply_chars=4000)
    chunks, result = await events_of(agent, TurnRequest("How can I save energy?"))
    reply = result.reply
    assert result.ok and "".join(chunks) == reply
    assert reply == ("Here are three ways to save energy: Close the windows at night. Turn down the heating "
                     "to 19 degrees Celsius. Use LED bulbs. In short. You can save up to 20 percent.")
    assert not re.search(r"[*#\[\]()💡✅]|https?:|^\s*(\d+\.|-)\s", reply, re.MULTILINE)


async def test_markdown_reply_is_capped_on_a_sentence_boundary() -> None:
    agent, _ = make_agent(ScriptedEngine([text(*MARKDOWN_REPLY)]), max_reply_chars=80)
    _, result = await events_of(agent, TurnRequest("How can I save energy?"))
    assert 0 < len(result.reply) <= 80
    assert result.reply == "Here are three ways to save energy: Close the windows at night."


async def test_thinking_never_reaches_the_reply_or_its_chunks() -> None:
    engine = ScriptedEngine([[ThinkingDelta("The user wants SECRET advice."), TextDelta("Open a window."),
                              ThinkingDelta("SECRET again")]])
    agent, _ = make_agent(engine)
    chunks, result = await events_of(agent, TurnRequest("It's stuffy", reasoning=Reasoning(ReasoningMode.ON)))
    assert result.reply == "Open a window." and "SECRET" not in "".join(chunks)
    assert engine.requests[0].reasoning == Reasoning(ReasoningMode.ON)


async def test_conversational_mode_reaches_the_model_from_settings_and_per_request() -> None:
    engine = ScriptedEngine([text("A."), text("B."), text("C.")])
    agent, settings = make_agent(engine, conversational_mode=True)
    await agent.ask(TurnRequest("one"))
    settings.set("conversational_mode", False)
    await agent.ask(TurnRequest("two"))
    await agent.ask(TurnRequest("three", conversational=True))
    assert [r.conversational for r in engine.requests] == [True, False, True]
    systems = [r.messages[0].content for r in engine.requests]
    assert CONVERSATIONAL_INSTRUCTIONS in systems[0] and WRITTEN_INSTRUCTIONS not in systems[0]
    assert WRITTEN_INSTRUCTIONS in systems[1] and CONVERSATIONAL_INSTRUCTIONS not in systems[1]
    assert systems[2] == systems[0]


async def test_reasoning_reaches_the_model_from_settings_and_per_request() -> None:
    engine = ScriptedEngine([text("A."), text("B."), text("C.")])
    agent, settings = make_agent(engine, reasoning="off")
    await agent.ask(TurnRequest("one"))
    settings.set("reasoning", "budget")
    settings.set("reasoning_budget", 16)
    await agent.ask(TurnRequest("two"))
    await agent.ask(TurnRequest("three", reasoning=Reasoning(ReasoningMode.ON)))
    assert [r.reasoning for r in engine.requests] == [
        Reasoning(ReasoningMode.OFF, 256), Reasoning(ReasoningMode.BUDGET, 16), Reasoning(ReasoningMode.ON)]


class TemplateEngine(ScriptedEngine):
    """Renders each request with a template that declares a conversational variable."""

    def __init__(self, rounds: list) -> None:
        super().__init__(rounds)
        self.format = TemplateChatFormat.from_template(CHATTY_TEMPLATE)
        self.prompts: list[str] = []

    async def stream(self, request: GenerationRequest) -> AsyncIterator[Delta]:
        self.prompts.append(self.format.render(request.messages, request.tools,
                                               conversational=request.conversational).text)
        async for delta in super().stream(request):
            yield delta


async def test_template_variable_and_instruction_always_agree() -> None:
    """A template that declares the switch gets it as a variable; the agent's instruction says the
    same in words, from the same flag, so the two never contradict each other."""
    engine = TemplateEngine([text("A."), text("B.")])
    assert engine.format.capabilities.conversational_variable == "conversational_mode"
    agent, _ = make_agent(engine)
    await agent.ask(TurnRequest("hello", conversational=True))
    await agent.ask(TurnRequest("hello", conversational=False))
    spoken, written = engine.prompts
    assert spoken.startswith("[SPOKEN]") and CONVERSATIONAL_INSTRUCTIONS in spoken
    assert WRITTEN_INSTRUCTIONS not in spoken
    assert written.startswith("[WRITTEN]") and WRITTEN_INSTRUCTIONS in written
    assert CONVERSATIONAL_INSTRUCTIONS not in written
