"""Commands waiting for the answer to "which one?": one per conversation, for its asker alone.

A command whose name fits several devices well ("turn on the desk light" with a desk lamp and
a desk light strip) is answered "Which one: A or B?" and kept. The asker's next turn in that
conversation ends the wait whatever it says; when it names or counts to an option within the
confirmation window ("the strip", "the second one"), the command goes on with that one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Sequence

from hub.agent.turn import TurnState, answered_directly
from hub.agent.types import TurnResult
from hub.agent.utterances import ordinal_position
from hub.core.answer import DirectAnswer
from hub.home.entities import Entity
from hub.home.namesakes import option_names
from hub.locales import join_list, phrase


@dataclass(frozen=True)
class Choice:
    """A command waiting for the answer to "which one?": its words and the good fits offered."""

    text: str
    options: tuple[Entity, ...]
    source: str
    client: str | None
    asked_at: float
    by_fast_path: bool = False  # the fast path holds the command (else the model goes on with it)


class Choices:
    def __init__(self, window_s: float) -> None:
        self._window_s = window_s
        self._waiting: dict[str, Choice] = {}  # conversation id → the command asking "which one?"

    def ask(self, state: TurnState, text: str, options: Sequence[Entity], by_fast_path: bool = False) -> None:
        """Keep a command that asked "which one?" for the asker's next answer (not a plan's)."""
        if state.ctx.dry_run:
            return
        request = state.request
        self._waiting[state.conversation.id] = Choice(text, tuple(options), request.source, request.client,
                                                      time.monotonic(), by_fast_path)

    def ask_which(self, state: TurnState, text: str, options: Sequence[Entity]) -> TurnResult:
        """"Which one: A or B?", and keep the command for the next turn's answer."""
        question = self.which_one(state, text, options)
        return answered_directly(state, text, DirectAnswer(question, "which_one"), "resolution")

    def which_one(self, state: TurnState, text: str, options: Sequence[Entity]) -> str:
        """Keep the command for the next turn's answer; the question "Which one: A or B?"."""
        self.ask(state, text, options)
        return phrase(state.language, "entity.ambiguous", options=join_list(option_names(options), state.language))

    def take(self, conversation_id: str, source: str, client: str | None) -> Choice | None:
        """The command waiting in the conversation when this asker answers (any answer of theirs
        ends the wait); None when nothing waits or another route or client speaks."""
        choice = self._waiting.get(conversation_id)
        if choice is None or (choice.source, choice.client) != (source, client):
            return None
        del self._waiting[conversation_id]
        return choice

    def options(self, conversation_id: str) -> tuple[Entity, ...]:
        """The options of the "which one?" the conversation waits on (none: none)."""
        choice = self._waiting.get(conversation_id)
        return choice.options if choice is not None and self.fresh(choice) else ()

    def waiting(self, conversation_id: str) -> bool:
        """Whether the conversation waits for an answer that may still count."""
        choice = self._waiting.get(conversation_id)
        return choice is not None and self.fresh(choice)

    def chosen(self, choice: Choice, answer: str, language: str,
               pick: Callable[[str, list[Entity], str], Entity | None]) -> Entity | None:
        """The option an answer names (`pick`) or counts to ("B", "the second one") within the
        confirmation window; None otherwise."""
        if not self.fresh(choice):
            return None
        named = pick(answer, list(choice.options), language)
        if named is not None:
            return named
        position = ordinal_position(answer, language)
        return choice.options[position] if position is not None and position < len(choice.options) else None

    def fresh(self, choice: Choice) -> bool:
        """Whether the answer still counts (within the confirmation window)."""
        return time.monotonic() - choice.asked_at <= self._window_s
