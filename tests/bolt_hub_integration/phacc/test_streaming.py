"""Streaming (issue 41): on HA with streaming conversation entities (2025.6+) the hub's sentences
go into the chat log as the hub sends them, so HA's text-to-speech starts before the reply ends;
on older HA (this machine's 2025.4) the whole reply comes at once.

HA 2025.4 has no streaming entities, so the streaming path is switched on here, and the chat log
records each delta as HA's pipeline does (its `chat_log_delta_listener`, opened the pipeline's
way around `async_converse`). The stand-in hub sends its first sentence and then waits until the
chat log has it before it sends the rest: an agent that waited for the whole reply never gets it.
"""

from __future__ import annotations

import asyncio
from typing import Any
from unittest.mock import patch

from pytest_homeassistant_custom_component.common import MockConfigEntry

from homeassistant.components import conversation
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import chat_session

from custom_components.bolt_hub import conversation as agent

from .conftest import agent_id, speech
from .fake_hub import FakeHub, result, turned_on

SENTENCES = ["Turned on Kitchen light.", " It is bright in there now.", " Anything else?"]


class DeltaRecorder:
    """HA's chat-log delta listener, recording each delta and whether the hub had ended its
    reply when the delta came; the first sentence opens the hub's gate."""

    def __init__(self, hub: FakeHub) -> None:
        self.hub = hub
        self.deltas: list[dict[str, Any]] = []
        self.reply_ended_at_first_text: bool | None = None

    def __call__(self, chat_log: conversation.ChatLog, delta: dict[str, Any]) -> None:
        self.deltas.append(delta)
        if delta.get("content") and self.reply_ended_at_first_text is None:
            self.reply_ended_at_first_text = self.hub.sent_done
            assert self.hub.gate is not None
            self.hub.gate.set()

    @property
    def texts(self) -> list[str]:
        return [d["content"] for d in self.deltas if d.get("content")]


async def pipeline_turn(hass: HomeAssistant, entry: MockConfigEntry, text: str,
                        recorder: DeltaRecorder) -> tuple[conversation.ConversationResult, conversation.ChatLog]:
    """One turn as HA's assist pipeline runs it: the chat log opened with a delta listener."""
    user_input = conversation.ConversationInput(text=text, context=Context(), conversation_id=None, device_id=None,
                                                language="en", agent_id=agent_id(hass, entry))
    with (chat_session.async_get_chat_session(hass, None) as session,
          conversation.async_get_chat_log(hass, session, user_input, chat_log_delta_listener=recorder) as chat_log):
        done = await asyncio.wait_for(conversation.async_converse(
            hass, text, session.conversation_id, Context(), language="en", agent_id=agent_id(hass, entry)), 15)
        return done, chat_log


async def test_sentences_reach_the_chat_log_before_the_reply_ends_in_order(hass: HomeAssistant, hub: FakeHub,
                                                                          entry: MockConfigEntry) -> None:
    hub.gate = asyncio.Event()
    hub.chunks = SENTENCES
    hub.next = result("".join(SENTENCES), awaiting="question", tool_calls=[turned_on("light.kitchen", "Kitchen light")])
    recorder = DeltaRecorder(hub)
    with patch.object(agent, "STREAMING", True):
        done, chat_log = await pipeline_turn(hass, entry, "turn on the kitchen light", recorder)
    assert hub.streamed == [True]
    assert recorder.reply_ended_at_first_text is False, "the first sentence came while the hub was still replying"
    assert recorder.texts == SENTENCES, "every sentence, in order"
    assert recorder.deltas[0] == {"role": "assistant"}
    roles = [c.role for c in chat_log.content]
    assert roles == ["system", "user", "assistant", "tool_result", "assistant"], "the call before the reply"
    assert chat_log.content[-1].content == "".join(SENTENCES)
    assert done.continue_conversation and speech(done) == "".join(SENTENCES)
    assert [t.id for t in done.response.success_results] == ["light.kitchen"]


async def test_a_hub_that_stops_mid_reply_is_a_spoken_error(hass: HomeAssistant, hub: FakeHub,
                                                            entry: MockConfigEntry) -> None:
    hub.gate = asyncio.Event()  # never opened: the hub stops after its first sentence
    hub.chunks = SENTENCES

    class StopAtFirstText(DeltaRecorder):
        def __call__(self, chat_log: conversation.ChatLog, delta: dict[str, Any]) -> None:
            self.deltas.append(delta)
            if delta.get("content"):
                hass.async_create_task(hub.stop())

    with patch.object(agent, "STREAMING", True):
        done, _ = await pipeline_turn(hass, entry, "turn on the kitchen light", StopAtFirstText(hub))
    assert done.response.error_code is not None
    assert speech(done) in ("I can't reach Bolt Hub right now. Please try again in a moment.",
                            "Bolt Hub could not answer that. Please try again.")


async def test_older_home_assistant_gets_the_whole_reply_at_once(hass: HomeAssistant, hub: FakeHub,
                                                                 entry: MockConfigEntry) -> None:
    assert agent.STREAMING is False, "HA 2025.4 has no streaming conversation entities"
    hub.next = result("".join(SENTENCES))
    recorder = DeltaRecorder(hub)
    done, chat_log = await pipeline_turn(hass, entry, "turn on the kitchen light", recorder)
    assert hub.streamed == [False] and recorder.deltas == []
    assert chat_log.content[-1].content == "".join(SENTENCES) and speech(done) == "".join(SENTENCES)
