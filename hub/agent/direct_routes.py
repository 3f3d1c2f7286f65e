"""The routes that answer a turn without the model, tried in order before it: the answer to
"which one?", a yes or no to a held action, a follow-up or relative command, the fast path.

Each route's `try_answer` gives its `DirectAnswer` (told under the route's `path`), a `ToModel`
hand-off (the model goes on with the command), or None: the next route is tried.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Protocol

from hub.agent.choices import Choice, Choices
from hub.agent.ports import ConfirmationsLike, DeterministicPath, FollowUpPath, HomeView
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
    """The asker's answer to "which one?" ("the first one", "the fan", "both"): the command goes
    on with that one (or all of them), the fast path's planned command when the fast path asked,
    else the model's."""

    path = "fast_path"

    def __init__(self, choices: Choices, home: HomeView | None, fast_path: DeterministicPath | None,
                 follow_ups: FollowUpPath | None = None) -> None:
        self._choices = choices
        self._home = home
        self._fast_path = fast_path
        self._follow_ups = follow_ups

    async def try_answer(self, state: TurnState) -> DirectAnswer | ToModel | None:
        if not state.persona.home:
            return None
        choice = self._choices.take(state.conversation.id, state.request.source, state.request.client)
        if choice is None or self._home is None:
            return None
        # "both" first: in some languages it holds a number ("les deux", "alle zwei")
        every = self._all(choice, state)
        one = None if every else self._choices.chosen(choice, state.text, state.language, self._home.pick)
        chosen = choice.options if every else (one,) if one is not None else ()
        if not chosen:
            return None
        _LOGGER.info("which one in %s: %s", state.conversation.id, ", ".join(e.entity_id for e in chosen))
        finished = await self._fast_path.finish(chosen, state.ctx) \
            if choice.by_fast_path and self._fast_path is not None else None
        return finished if finished is not None else ToModel(choice.text, chosen)

    def _all(self, choice: Choice, state: TurnState) -> bool:
        """Whether the answer, within the window, is "all of them" / "both"."""
        return self._follow_ups is not None and self._choices.fresh(choice) \
            and self._follow_ups.means_all(state.text, state.language)


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
                    _wait_for_choice(state, outcome, self._fast_path, self._choices)
                    return outcome
        if unknown_name is not None:
            state.speaking(unknown_name[0])
            return unknown_name[1]
        return None


class FollowUp:
    """A follow-up ("turn it off", "and the bedroom too", "the other one") or a relative
    command ("a bit brighter", "it's too cold in here"), in the text's candidate languages. Tried
    before the fast path, whose templates read "turn them off" as a device called "them"; its
    own templates are strict, so a plain command never matches them."""

    path = "fast_path"

    def __init__(self, follow_ups: FollowUpPath | None, fast_path: DeterministicPath | None, choices: Choices,
                 enabled: bool) -> None:
        self._follow_ups = follow_ups
        self._fast_path = fast_path
        self._choices = choices
        self._enabled = enabled

    async def try_answer(self, state: TurnState) -> DirectAnswer | ToModel | None:
        if not self._enabled or not state.persona.home or self._follow_ups is None:
            return None
        recent = state.conversation.recent
        said_before = [recent.language] if recent is not None and recent.language else []
        for language in dict.fromkeys([*state.languages, *said_before]):  # a short "apágala"
            ctx = replace(state.ctx, language=language)
            outcome = await self._follow_ups.try_handle(state.text, language, ctx, recent)
            if outcome is not None:
                state.speaking(language)
                _wait_for_choice(state, outcome, self._fast_path, self._choices)
                return outcome
        return None


def _wait_for_choice(state: TurnState, outcome: DirectAnswer, fast_path: DeterministicPath | None,
                     choices: Choices) -> None:
    """When the fast path asked "which one?" and holds the command, the asker's next turn may
    answer it."""
    options = fast_path.unfinished(state.ctx.conversation_id) if outcome.candidates and fast_path else ()
    if options:
        choices.ask(state, state.text, options, by_fast_path=True)
