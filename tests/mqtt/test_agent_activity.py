"""The agent's observers see every turn; they can never disturb one."""

from __future__ import annotations

import pytest

from hub.agent.agent import Agent
from hub.agent.activity import ConversationsCleared, Reported, TurnStarted
from hub.agent.types import ReplyChunk, TurnDone, TurnRequest
from hub.config import validate
from hub.core.tools import ToolRegistry
from hub.options import hub_options
from hub.settings import RuntimeSettings
from helpers.scripted_engine import ScriptedEngine, text
from mqtt.fake_agent import FakeAgent


class BrokenAgent(FakeAgent):
    async def turn(self, request):
        yield ReplyChunk("half a")
        raise RuntimeError("agent bug")


async def test_observers_see_every_step_and_a_failing_observer_changes_nothing():
    options = hub_options(validate({"fast_path": False}))
    agent = Agent(engine=ScriptedEngine([text("Hello.")]), registry=ToolRegistry(),
                  settings=RuntimeSettings(options.settings), options=options.agent)
    seen: list[type] = []
    agent.add_observer(lambda turn, activity: seen.append(type(activity)))
    agent.add_observer(lambda turn, activity: 1 / 0)
    result = await agent.ask(TurnRequest(text="hi", conversation_id="c"))
    assert result.ok and result.reply == "Hello."
    assert seen[0] is TurnStarted and ReplyChunk in seen and seen[-1] is TurnDone
    await agent.report("c", "done later")
    assert agent.conversations.get("c").messages[-1].content == "done later"
    agent.clear_conversations()
    assert seen[-2:] == [Reported, ConversationsCleared]
    assert agent.conversations.get("c") is None


async def test_a_turn_that_breaks_still_ends_for_observers():
    agent = BrokenAgent()
    done = []
    agent.add_observer(lambda turn, activity: done.append(activity) if isinstance(activity, TurnDone) else None)
    with pytest.raises(RuntimeError):
        await agent.ask(TurnRequest(text="hi"))
    assert len(done) == 1 and done[0].result.ok is False and done[0].result.error == "internal"


async def test_an_abandoned_turn_ends_as_cancelled():
    agent = FakeAgent()
    done = []
    agent.add_observer(lambda turn, activity: done.append(activity) if isinstance(activity, TurnDone) else None)
    stream = agent.run(TurnRequest(text="hi"))
    assert isinstance(await stream.__anext__(), ReplyChunk)
    await stream.aclose()
    assert [d.result.error for d in done] == ["cancelled"]
