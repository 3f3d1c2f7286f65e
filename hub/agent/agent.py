"""The agent's façade: request → (direct routes | the model's turn) → reply, its observers, priming.

The agent holds no network code: interfaces hand it `TurnRequest`s and stream its events.
Each turn runs as its own task so a deadline can end it cleanly whatever it is waiting on,
and turns of one conversation run one at a time, in arrival order.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import time
import uuid
from typing import Any, AsyncGenerator, Awaitable, Callable

from hub.agent.activity import AgentActivity, ConversationsCleared, Observer, Reported
from hub.agent import prompt
from hub.agent.choices import Choices
from hub.agent.conversation import Conversation, ConversationStore
from hub.agent.direct_routes import ChosenOption, Confirmation, DirectRoute, FastPath, FollowUp, ToModel
from hub.agent.intake import Reception
from hub.agent.model_turn import ModelTurn
from hub.agent.personas import Persona, PersonaBook, UnknownPersona, home_persona
from hub.agent.ports import (ActionReading, AgentOptions, ConfirmationsLike, DeterministicPath, FollowUpPath,
                             HomeView, LanguageIdentifier, SpeakerLocator)
from hub.agent.priming import Priming
from hub.agent.stand_in_routes import OwnQuestions, StandInLimits
from hub.agent.planner import Planner
from hub.agent.plans import PlanRun, TurnPlan
from hub.agent.turn import RunningTurns, TurnState, answered_directly, ended, failure, fitted
from hub.agent.types import TurnDone, TurnEvent, TurnRequest, TurnResult, final_result
from hub.agent.utterances import asks_back
from hub.understanding.action_words import ActionWords
from hub.understanding.language import TextLanguages
from hub.understanding.referents import recent_after
from hub.core.tools import ToolContext, ToolRegistry, ToolResult
from hub.core.messages import Message, ToolCall
from hub.llm.types import Engine, GenerationRequest, stands_in
from hub.locales import SUPPORTED_LANGUAGES, normalize_language
from hub.settings import RuntimeSettings

_LOGGER = logging.getLogger(__name__)
_TOO_SHORT_TO_TELL = 4  # words: fewer, and the model speaks the language the client named


class Agent:
    def __init__(
        self,
        *,
        engine: Engine,
        registry: ToolRegistry,
        settings: RuntimeSettings,
        options: AgentOptions,
        home: HomeView | None = None,
        fast_path: DeterministicPath | None = None,
        confirmations: ConfirmationsLike | None = None,
        personas: PersonaBook | None = None,
        identify: LanguageIdentifier | None = None,
        places: SpeakerLocator | None = None,
        follow_ups: FollowUpPath | None = None,
        reading: ActionReading | None = None,
        clock_text: Callable[[], str] = lambda: time.strftime("%A %Y-%m-%d %H:%M"),
    ) -> None:
        self._engine = engine
        self._registry = registry
        self._options = options
        self._settings = settings
        self._home = home
        self._confirmations = confirmations  # actions held for a "yes" (hub.agent.pending)
        self._clock_text = clock_text
        self._identify = identify or TextLanguages()  # which languages a request's text may be in
        self._reading = reading or ActionWords()  # which way a request's words turn a device
        self._places = places  # where the speaker is (hub.home.places); None: requests say no place
        self.activity = AgentActivity()  # the observers of every turn (hub.agent.activity)
        self.conversations = ConversationStore(idle_seconds=options.conversation_idle_minutes * 60)
        self.languages: list[str] = list(SUPPORTED_LANGUAGES)
        self._choices = Choices(options.confirm_seconds)  # commands asking "which one?"
        # who asks, in which conversation, as which persona, in which languages
        self._reception = Reception(self.conversations, lambda: self.personas, self._identify, self._choices,
                                    confirmations, options.language,
                                    fast_path.unnamed if fast_path is not None else lambda text: text)
        # without a book: the home assistant alone, with every registered tool
        self.personas = personas or PersonaBook(home_persona(prompt.ASSISTANT_INSTRUCTIONS),
                                                home_tools=registry.names())
        self._model = self._model_turn(engine)
        self.stand_in, self.model_acts = self._model.stand_in, self._model.model_acts
        self._routes: tuple[DirectRoute, ...] = (
            ChosenOption(self._choices, home, fast_path, follow_ups), Confirmation(confirmations),
            FollowUp(follow_ups, fast_path, self._choices, options.fast_path),
            OwnQuestions(home, lambda: self.stand_in), FastPath(fast_path, self._choices, options.fast_path),
            StandInLimits(home, lambda: self.stand_in, lambda: self._engine.info.languages))
        # keep every persona's stable prefix and each conversation's continuation warm
        self.priming = Priming(engine, self._model.stable_request, lambda: self.personas)
        self._running = RunningTurns()
        self._planner = Planner(reception=self._reception, context_for=self._context, routes=self._fitted,
                                registry=registry, personas=lambda: self.personas, activity=self.activity,
                                identify=self._identify, home=home, confirmations=confirmations,
                                turn_timeout=options.turn_timeout)
        self._stopping = False

    # --- public API ---------------------------------------------------------------------------

    def run(self, request: TurnRequest) -> AsyncGenerator[TurnEvent, None]:
        """Stream one turn's events, shown to the observers; the last is always TurnDone.
        Never raises for turn errors."""
        return self.activity.observe(request, self._run(request))

    def add_observer(self, observer: Observer) -> Callable[[], None]:
        """Observe every later turn, whichever interface asked; call the result to stop."""
        return self.activity.add_observer(observer)

    async def wait_idle(self, timeout: float) -> bool:
        """Wait at most `timeout` s until no turn runs (a shutdown drain); True when idle."""
        return await self.activity.wait_idle(timeout)

    async def _run(self, request: TurnRequest) -> AsyncGenerator[TurnEvent, None]:
        taken = await self._reception.take(request, stopping=self._stopping)
        request, language = taken.request, taken.language
        if taken.error:
            yield TurnDone(failure(request.conversation_id or "", language, taken.error))
            return
        inherited = self._reception.client_recent(request.client) if request.conversation_id is None else None
        conversation = self.conversations.get_or_create(request.conversation_id, language)
        conversation.language = language
        conversation.persona = taken.persona.key
        conversation.recent = conversation.recent or inherited
        if request.client is not None:
            self.conversations.remember_client(request.client, conversation.id)
        run = functools.partial(self._locked_turn, request, conversation, taken.languages, taken.persona)
        async for event in self._running.events(conversation.id, language, self._options.turn_timeout, run):
            yield event

    def prepare(self, request: TurnRequest) -> None:
        """A turn for `request` is coming whose words are not known yet (a voice turn while its
        audio is transcribed): evaluate, in the background, what its prompt starts with whatever
        the words are (the conversation so far and the user message's clock line), so that the
        turn evaluates only its words. The turn interrupts priming that is still running."""
        if not self.priming.supported or self._stopping:
            return
        known = self._reception.known(request)
        try:
            persona = self._reception.persona_for(request, known)
        except UnknownPersona:
            return  # the turn itself will say so
        language = normalize_language(request.language or persona.language, default=self._options.language)
        history = list(known.messages) if known is not None else []
        head = Message("user", prompt.user_message_head(language, self._clock_text()))
        self.priming.continuation([*history, head], persona)

    async def ask(self, request: TurnRequest) -> TurnResult:
        return await final_result(self.run(request))

    async def plan(self, request: TurnRequest) -> TurnPlan:
        """What the hub would do with `request`, acting on nothing (hub.agent.planner)."""
        return await self._planner.plan(request)

    async def run_plan(self, plan_id: str, client: str | None = None) -> PlanRun:
        """Run a plan made in the last five minutes, once (hub.agent.planner)."""
        return await self._planner.run_plan(plan_id, client)

    async def call_tool(self, name: str, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run one tool without the model (MQTT/REST direct calls), under the same persona scope,
        argument validation and policy as the model's calls. Raises UnknownPersona."""
        started = time.monotonic()
        persona = self.personas.get(ctx.persona)  # UnknownPersona: nothing ran
        scoped = dataclasses.replace(ctx, persona=persona.key)
        call = ToolCall(name, arguments)
        result = await self._registry.call(call, scoped, allowed=self.personas.tool_names(persona))
        _LOGGER.info("direct tool %s from %s as %s: %s", name, ctx.source, persona.key,
                     "ok" if result.ok else result.data.get("error"))
        self.activity.tool_called(call, ctx, result, started)
        return result

    def greet(self, persona_key: str | None, conversation_id: str | None = None) -> TurnResult:
        """Start a conversation with a persona: its greeting (empty when it has none) goes into
        the history as its first words. Raises UnknownPersona."""
        persona = self.personas.get(persona_key)
        language = normalize_language(persona.language, default=self._options.language)
        conversation = self.conversations.get_or_create(conversation_id, language)
        conversation.persona = persona.key
        if persona.greeting and not conversation.messages:
            conversation.messages.append(Message("assistant", persona.greeting))
        return TurnResult(conversation.id, language, persona.greeting or "", path="greeting")

    def stable_request(self, persona: Persona | None = None) -> GenerationRequest:
        """What every turn of `persona` (default: the default persona) starts with; the primer
        evaluates it ahead of turns."""
        return self._model.stable_request(persona or self.personas.get(None))

    async def start(self) -> None:
        """Prime every persona's stable prefix while idle (and again when it changes), so even a
        persona's first turn only pays for its own message; load language identification."""
        self._reception.start()
        self._model.log_role()
        await self.priming.start()

    async def switch_engine(self, engine: Engine) -> None:
        """Answer every later turn with `engine` (a downloaded model taking over from the
        stand-in): its stable prompt is primed first, while the old engine still answers; turns
        already running finish on the engine they started with (the caller closes it later)."""
        model = self._model_turn(engine)
        model.log_role()
        await self.priming.switch(engine, model.stable_request)
        self._engine, self._model = engine, model
        self.stand_in, self.model_acts = model.stand_in, model.model_acts

    def _model_turn(self, engine: Engine) -> ModelTurn:
        stand_in = stands_in(engine.info.is_stand_in, engine.info.n_params)
        return ModelTurn(engine=engine, registry=self._registry, settings=self._settings, options=self._options,
                         home=self._home, choices=self._choices, personas=lambda: self.personas,
                         model_acts=self._options.model_home_control or not stand_in, stand_in=stand_in,
                         identify=self._identify, reading=self._reading, clock_text=self._clock_text)

    async def wait_primed(self) -> None:
        """Wait until the conversations' background priming has finished (tests, benches)."""
        await self.priming.wait()

    def stop_turns(self) -> None:
        """Shutdown: end every running turn now with the spoken "stopping" reply (their tasks are
        cancelled), and refuse new turns with it."""
        self._stopping = True
        self._running.stop()

    async def stop(self) -> None:
        await self.priming.stop()
        self._reception.stop()

    async def report(self, conversation_id: str, text: str) -> None:
        """Add an outcome that arrived after its turn ended, as something the hub said."""
        conversation = self.conversations.get_or_create(conversation_id, self._options.language)
        async with conversation.lock:
            conversation.messages.append(Message("assistant", text))
        self.activity.notify(None, Reported(conversation_id, text))

    def clear_conversations(self) -> None:
        self.conversations.clear()
        self.activity.notify(None, ConversationsCleared())

    # --- one turn -----------------------------------------------------------------------------

    async def _locked_turn(self, request: TurnRequest, conversation: Conversation, languages: list[str],
                           persona: Persona, emit: Callable[[TurnEvent], None], deadline: float) -> None:
        language = languages[0]
        async with conversation.lock:
            ctx = self._context(request, conversation.id, language, persona)
            state = TurnState(request, conversation, language, ctx, persona, deadline, emit, languages)
            result = await ended(state, self._fitted(state))
            conversation.recent = recent_after(
                conversation.recent, [(f.call.name, f.call.arguments, f.ok) for f in state.finished_calls],
                self._registry.device_actions(), [e.entity_id for e in self._choices.options(conversation.id)],
                time.monotonic(), state.language)
            result.awaiting = self._reception.awaiting(conversation.id) or (
                "question" if result.ok and asks_back(result.reply, result.language) else None)
            emit(TurnDone(result))
            if result.ok and result.path == "model":
                self.priming.continuation(list(state.conversation.messages), state.persona)

    def _context(self, request: TurnRequest, conversation_id: str, language: str, persona: Persona,
                 dry_run: bool = False) -> ToolContext:
        """Who asks, in which language, from where (the speaker's area and floor, when found)."""
        place = self._places.locate(satellite_id=request.satellite_id, device_id=request.device_id,
                                    area=request.area, language=language) if self._places else None
        return ToolContext(conversation_id, language, request.source, request.satellite_id, request.device_id,
                           persona.key, request.client, uuid.uuid4().hex, area=place.area if place else None,
                           floor=(place.floor if place else None) or request.floor, dry_run=dry_run)

    def _fitted(self, state: TurnState) -> Callable[[], Awaitable[TurnResult]]:
        """The turn's routes, its history trimmed to fit the model (agent.turn.fitted)."""
        return functools.partial(fitted, state, functools.partial(self._turn, state), self._options.history_tokens,
                                 self._engine.count_tokens)

    async def _turn(self, state: TurnState) -> TurnResult:
        """The first route that answers, in order, else the model."""
        for route in self._routes:
            answer = await route.try_answer(state)
            if isinstance(answer, ToModel):
                return await self._model.answer(state, answer.text, answer.targets)
            if answer is not None:
                return answered_directly(state, state.text, answer, route.path)
        named = normalize_language(state.request.language, default="") if state.request.language else ""
        if named and named != state.language and len(state.text.split()) < _TOO_SHORT_TO_TELL:
            # no template took it in any language, and a few words ("blorp zibble wat") say too
            # little to overrule the language the client named: the model answers in that one
            state.speaking(named)
        return await self._model.answer(state, state.text)
