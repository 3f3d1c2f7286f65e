"""ObservedAgent: observers see every turn; they can never disturb one."""

from __future__ import annotations

import pytest

from hub.agent.types import ReplyChunk, TurnDone, TurnRequest
from hub.interfaces.agent_activity import ConversationsCleared, ObservedAgent, Reported, TurnStarted
from mqtt.fake_agent import FakeAgent


class BrokenAgent(FakeAgent):
    async def run(self, request):
        yield ReplyChunk("half a")
        raise RuntimeError("agent bug")


async def test_observers_see_every_step_and_a_failing_observer_changes_nothing():
    agent = ObservedAgent(FakeAgent())
    seen: list[type] = []
    agent.add_observer(lambda turn, activity: seen.append(type(activity)))
    agent.add_observer(lambda turn, activity: 1 / 0)
    result = await agent.ask(TurnRequest(text="hi", conversation_id="c"))
    assert result.ok and result.reply.startswith("You said: hi")
    assert seen == [TurnStarted, ReplyChunk, TurnDone]
    await agent.report("c", "done later")
    agent.clear_conversations()
    assert seen[-2:] == [Reported, ConversationsCleared]
    assert agent.agent.reports == [("c", "done later")] and agent.agent.cleared == 1
    assert agent.languages == ["en", "de"] and agent.gates == {}  # other attributes pass through


async def test_a_turn_that_breaks_still_ends_for_observers():
    agent = ObservedAgent(BrokenAgent())
    done = []
    agent.add_observer(lambda turn, activity: done.append(activity) if isinstance(activity, TurnDone) else None)
    with pytest.raises(RuntimeError):
        await agent.ask(TurnRequest(text="hi"))
    assert len(done) == 1 and done[0].result.ok is False and done[0].result.error == "internal"


async def test_an_abandoned_turn_ends_as_cancelled():
    agent = ObservedAgent(FakeAgent())
    done = []
    agent.add_observer(lambda turn, activity: done.append(activity) if isinstance(activity, TurnDone) else None)
    stream = agent.run(TurnRequest(text="hi"))
    assert isinstance(await stream.__anext__(), ReplyChunk)
    await stream.aclose()
    assert [d.result.error for d in done] == ["cancelled"]

