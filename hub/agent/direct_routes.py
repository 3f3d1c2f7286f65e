"""The routes that answer a turn without the model, tried in order before it: the answer to
"which one?", a yes or no to a held action, the fast path.

Each route's `try_answer` gives its `DirectAnswer` (told under the route's `path`), a `ToModel`
hand-off (the model goes on with the command), or None: the next route is tried.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Protocol

from hub.agent.choices import Choices
from hub.agent.ports import ConfirmationsLike, DeterministicPath, HomeView
from hub.agent.turn import TurnState
from hub.core.answer import DirectAnswer
from hub.home.entities import Entity

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True)
class ToModel:
    """The model answers `text` (the command that asked "which one?"), acting on `targets`."""

    text: str
    targets: tuple[Entity, ...]


class DirectRoute(Protocol):
    path: str  # the answered turn's `TurnResult.path`

    async def try_answer(self, state: TurnState) -> DirectAnswer | ToModel | None: ...


class ChosenOption:
    """The asker's answer to "which one?" ("the first one", "the fan"): the command goes on
    with that one, the fast path's planned command when the fast path asked, else the model's."""

    path = "fast_path"

    def __init__(self, choices: Choices, home: HomeView | None, fast_path: DeterministicPath | None) -> None:
        self._choices = choices
        self._home = home
        self._fast_path = fast_path

    async def try_answer(self, state: TurnState) -> DirectAnswer | ToModel | None:
        if not state.persona.home:
            return None
        choice = self._choices.take(state.conversation.id, state.request.source, state.request.client)
        if choice is None or self._home is None:
            return None
        chosen = self._choices.chosen(choice, state.text, state.language, self._home.pick)
        if chosen is None:
            return None
        _LOGGER.info("which one in %s: %s", state.conversation.id, chosen.entity_id)
        finished = await self._fast_path.finish(chosen, state.ctx) \
            if choice.by_fast_path and self._fast_path is not None else None
        return finished if finished is not None else ToModel(choice.text, (chosen,))


class Confirmation:
    """A yes or no to actions held for the user's confirmation (hub.agent.pending)."""

    path = "confirmation"

    def __init__(self, confirmations: ConfirmationsLike | None) -> None:
        self._confirmations = confirmations

    async def try_answer(self, state: TurnState) -> DirectAnswer | ToModel | None:
        if not state.persona.home or self._confirmations is None:
            return None
        return await self._confirmations.try_handle(state.text, state.language, state.ctx)


class FastPath:
    """The templates' reading of the text, in its candidate languages: the first whose
    templates match decides, strictly in every language before a name the resolver reads (the
    slow pass); "no such device" only when no language understood it better."""

    path = "fast_path"

    def __init__(self, fast_path: DeterministicPath | None, choices: Choices, enabled: bool) -> None:
        self._fast_path = fast_path
        self._choices = choices
        self._enabled = enabled

    async def try_answer(self, state: TurnState) -> DirectAnswer | ToModel | None:
        if not self._enabled or not state.persona.home or self._fast_path is None:
            return None
        unknown_name: tuple[str, DirectAnswer] | None = None
        for read_names in (False, True) if len(state.languages) > 1 else (True,):
            for language in state.languages:
                ctx = replace(state.ctx, language=language)
                outcome = await self._fast_path.try_handle(state.text, language, ctx, read_names=read_names)
                if outcome is not None and outcome.intent == "not_found":
                    unknown_name = unknown_name or (language, outcome)
                elif outcome is not None:
                    state.speaking(language)
                    options = self._fast_path.unfinished(ctx.conversation_id) if outcome.candidates else ()
                    if options:  # the fast path asked "which one?" and holds the command
                        self._choices.ask(state, state.text, options, by_fast_path=True)
                    return outcome
        if unknown_name is not None:
            state.speaking(unknown_name[0])
            return unknown_name[1]
        return None
