"""The turn loop: request → (fast path | prompt → model → tool calls → results → model) → reply.

The agent holds no network code: interfaces hand it `TurnRequest`s and stream its events.
Each turn runs as its own task so a deadline can end it cleanly whatever it is waiting on,
and turns of one conversation run one at a time, in arrival order.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import logging
import time
import uuid
from dataclasses import replace
from typing import Any, AsyncGenerator, Callable, Sequence

from hub.agent.activity import AgentActivity, ConversationsCleared, Observer, Reported
from hub.agent import prompt
from hub.agent.choices import Choices
from hub.agent.conversation import Conversation, ConversationStore
from hub.agent.personas import Persona, PersonaBook, UnknownPersona, home_persona
from hub.agent.ports import AgentOptions, ConfirmationsLike, DeterministicPath, HomeView
from hub.agent.prefix_primer import PrefixPrimer
from hub.agent.reply import ReplyBuilder
from hub.agent.turn import (TurnState, answered_directly, failure, as_reading, chunk_emitter,
                            first_round_constraint, generate, not_found, run_tools, said_for_actions,
                            speakable)
from hub.agent.utterances import is_question
from hub.agent.types import (
    TurnDone,
    TurnEvent,
    TurnRequest,
    TurnResult,
    final_result,
    request_problem,
    without_format_characters,
)
from hub.understanding import language as language_id
from hub.home.entities import Entity
from hub.home.resolve import Match
from hub.core.answer import DirectAnswer
from hub.core.speech import CONFIRMATION_REQUIRED, speech_of
from hub.core.tools import ToolContext, ToolRegistry, ToolResult
from hub.llm.types import (Engine, EngineBusy, EngineError, GenerationRequest, Message, PromptTooLong, ToolCall,
                           ToolConstraint, stands_in)
from hub.locales import SUPPORTED_LANGUAGES, normalize_language
from hub.settings import RuntimeSettings

_LOGGER = logging.getLogger(__name__)
_STOPPING = object()  # put in a running turn's events by stop_turns()


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
        clock_text: Callable[[], str] = lambda: time.strftime("%A %Y-%m-%d %H:%M"),
    ) -> None:
        self._engine = engine
        self._registry = registry
        self._settings = settings
        self._options = options
        self._home = home
        self._fast_path = fast_path
        self._confirmations = confirmations  # actions held for a "yes" (hub.agent.pending)
        self._clock_text = clock_text
        self.activity = AgentActivity()  # the observers of every turn (hub.agent.activity)
        self.conversations = ConversationStore(idle_seconds=options.conversation_idle_minutes * 60)
        self.languages: list[str] = list(SUPPORTED_LANGUAGES)
        self._constrained = engine.uses_constrained_tools
        self.model_acts = options.model_home_control or not stands_in(engine.info.is_stand_in, engine.info.n_params)
        self._choices = Choices(options.confirm_seconds)  # commands asking "which one?"
        # without a book: the home assistant alone, with every registered tool
        self.personas = personas or PersonaBook(home_persona(prompt.ASSISTANT_INSTRUCTIONS),
                                                home_tools=registry.names())
        # keep the default persona's stable prefix and each conversation's continuation warm
        self.primer = PrefixPrimer(engine, self.stable_request)
        self.persona_primers: list[PrefixPrimer] = []  # the other personas' prefixes (from start())
        self._priming: set[asyncio.Task[bool]] = set()
        self._open_turns: set[asyncio.Queue[Any]] = set()  # each running turn's events
        self._stopping = False
        self._language_loading: asyncio.Task[bool] | None = None  # from start()

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
        if isinstance(request.text, str):
            request = dataclasses.replace(request, text=without_format_characters(request.text))
        error = request_problem(request.text)
        if request.conversation_id is None:
            request = dataclasses.replace(request, conversation_id=self._waiting_conversation(request.client))
        known = self.conversations.get(request.conversation_id) if request.conversation_id else None
        try:
            persona = self.personas.choose(request.persona or (known.persona if known else None),
                                           request.satellite_id, request.device_id)
        except UnknownPersona as err:
            _LOGGER.warning("%s", err)
            persona, error = self.personas.get(None), error or "unknown_persona"
        if self._stopping:
            error = "stopping"
        languages = await self._languages(request, persona, known) if not error else []
        language = languages[0] if languages else normalize_language(
            request.language or persona.language, default=self._options.language)
        if error:
            yield TurnDone(failure(request.conversation_id or "", language, error))
            return
        conversation = self.conversations.get_or_create(request.conversation_id, language)
        conversation.language = language
        conversation.persona = persona.key
        if request.client is not None:
            self.conversations.remember_client(request.client, conversation.id)
        events: asyncio.Queue[Any] = asyncio.Queue()
        deadline = time.monotonic() + self._options.turn_timeout
        task = asyncio.create_task(self._locked_turn(request, conversation, languages, persona, deadline, events))
        self._open_turns.add(events)
        try:
            while True:
                try:
                    event = await asyncio.wait_for(events.get(), max(0.0, deadline - time.monotonic()))
                except asyncio.TimeoutError:
                    _LOGGER.warning("turn in %s timed out after %ss", conversation.id, self._options.turn_timeout)
                    event = TurnDone(failure(conversation.id, language, "timeout"))
                if event is _STOPPING:
                    _LOGGER.info("turn in %s cut short: the hub is stopping", conversation.id)
                    event = TurnDone(failure(conversation.id, language, "stopping"))
                yield event
                if isinstance(event, TurnDone):
                    return
        finally:
            self._open_turns.discard(events)
            if not task.done():
                task.cancel()

    def prepare(self, request: TurnRequest) -> None:
        """A turn for `request` is coming whose words are not known yet (a voice turn while its
        audio is transcribed): evaluate, in the background, what its prompt starts with whatever
        the words are (the conversation so far and the user message's clock line), so that the
        turn evaluates only its words. The turn interrupts priming that is still running."""
        if not self.primer.supported or self._stopping:
            return
        known = self.conversations.get(request.conversation_id) if request.conversation_id else None
        try:
            persona = self.personas.choose(request.persona or (known.persona if known else None),
                                           request.satellite_id, request.device_id)
        except UnknownPersona:
            return  # the turn itself will say so
        language = normalize_language(request.language or persona.language, default=self._options.language)
        history = list(known.messages) if known is not None else []
        head = Message("user", prompt.user_message_head(language, self._clock_text()))
        self._prime_in_background([*history, head], persona)

    async def ask(self, request: TurnRequest) -> TurnResult:
        return await final_result(self.run(request))

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
        persona = persona or self.personas.get(None)
        conversational, reasoning = self._modes(persona, None)
        return GenerationRequest(
            messages=[self._system_message(persona, conversational)],
            tools=self._registry.specs(self._offered_tools(persona)),
            reasoning=reasoning, conversational=conversational,
            max_tokens=self._options.max_tokens, temperature=self._options.temperature,
        )

    async def start(self) -> None:
        """Prime every persona's stable prefix while idle (and again when it changes), so even a
        persona's first turn only pays for its own message; load language identification."""
        self._language_loading = asyncio.create_task(language_id.prepare())
        if not self.model_acts:
            _LOGGER.info("the model %s is a stand-in: it chats and reads states, device actions come "
                         "only from the fast path (set model_home_control to let it act)", self._engine.info.name)
        elif stands_in(self._engine.info.is_stand_in, self._engine.info.n_params):
            _LOGGER.info("the model %s is a stand-in, allowed to control devices (model_home_control)",
                         self._engine.info.name)
        self.persona_primers = [PrefixPrimer(self._engine, functools.partial(self.stable_request, persona),
                                             name=f"persona:{persona.key}")
                                for persona in self.personas.all() if persona.key != self.personas.default]
        for primer in (self.primer, *self.persona_primers):
            await primer.start()

    async def wait_primed(self) -> None:
        """Wait until the conversations' background priming has finished (tests, benches)."""
        while self._priming:
            await asyncio.gather(*self._priming, return_exceptions=True)

    def stop_turns(self) -> None:
        """Shutdown: end every running turn now with the spoken "stopping" reply (their tasks are
        cancelled), and refuse new turns with it."""
        self._stopping = True
        for events in self._open_turns:
            events.put_nowait(_STOPPING)

    async def stop(self) -> None:
        for primer in (self.primer, *self.persona_primers):
            await primer.stop()
        for task in list(self._priming):
            task.cancel()
        if self._language_loading is not None:
            self._language_loading.cancel()

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

    async def _locked_turn(
        self, request: TurnRequest, conversation: Conversation, languages: list[str], persona: Persona,
        deadline: float, events: asyncio.Queue[Any],
    ) -> None:
        language = languages[0]
        async with conversation.lock:
            ctx = ToolContext(conversation.id, language, request.source, request.satellite_id, request.device_id,
                              persona.key, request.client, uuid.uuid4().hex)
            state = TurnState(request, conversation, language, ctx, persona, deadline, events.put_nowait, languages)
            try:
                result = await self._turn_fitting_context(state)
            except asyncio.CancelledError:
                raise
            except EngineError as err:
                code = ("busy" if isinstance(err, EngineBusy)
                        else "too_long" if isinstance(err, PromptTooLong) else "model")
                _LOGGER.warning("model error in %s: %s", conversation.id, err)
                result = failure(conversation.id, language, code)
            except Exception:
                _LOGGER.exception("turn in %s failed", conversation.id)
                result = failure(conversation.id, language, "generic")
            result.timings.total_s = time.monotonic() - state.started
            events.put_nowait(TurnDone(result))
            if result.ok and result.path == "model":
                self._prime_continuation(state)

    async def _turn_fitting_context(self, state: TurnState) -> TurnResult:
        """Run the turn and trim the history it added to; if the history makes the prompt too
        long for the model, drop the oldest half of it and try again (only while nothing has been
        done yet)."""
        while True:
            try:
                result = await self._turn(state)
                self._trim(state.conversation)
                return result
            except PromptTooLong:
                turns = state.conversation.turns()
                if not turns or state.finished_calls:
                    raise
                keep = turns[len(turns) // 2 + 1:] if len(turns) > 1 else []
                _LOGGER.info("history of %s too long for the context: dropping %d of %d turns",
                             state.conversation.id, len(turns) - len(keep), len(turns))
                state.conversation.messages = [m for turn in keep for m in turn]

    async def _turn(self, state: TurnState) -> TurnResult:
        text = state.request.text.strip()
        choice = self._choices.take(state.conversation.id, state.request.source, state.request.client) \
            if state.persona.home else None
        if choice is not None and self._home is not None:
            chosen = self._choices.chosen(choice, text, state.language, self._home.pick)
            if chosen is not None:  # "the first one", "the fan": the command goes on with that one
                _LOGGER.info("which one in %s: %s", state.conversation.id, chosen.entity_id)
                finished = await self._fast_path.finish(choice.action, chosen, state.ctx) \
                    if choice.action is not None and self._fast_path is not None else None
                if finished is not None:  # the fast path asked: its planned command, on that one
                    return answered_directly(state, text, finished, "fast_path")
                return await self._model_turn(state, choice.text, targets=[chosen])
        if state.persona.home and self._confirmations is not None:
            outcome = await self._confirmations.try_handle(text, state.language, state.ctx)
            if outcome is not None:
                return answered_directly(state, text, outcome, "confirmation")
        if self._options.fast_path and state.persona.home and self._fast_path is not None:
            # the text's candidate languages: the first whose templates match decides, strictly in
            # every language before a name the resolver reads (the slow pass); "no such device"
            # only when no language understood it better
            unknown_name: tuple[str, DirectAnswer] | None = None
            for read_names in (False, True) if len(state.languages) > 1 else (True,):
                for language in state.languages:
                    ctx = replace(state.ctx, language=language)
                    outcome = await self._fast_path.try_handle(text, language, ctx, read_names=read_names)
                    if outcome is not None and outcome.intent == "not_found":
                        unknown_name = unknown_name or (language, outcome)
                    elif outcome is not None:
                        state = state.speaking(language)
                        if outcome.pending is not None:  # the fast path asked "which one?"
                            self._choices.ask(state, text, outcome.pending.targets, outcome.pending)
                        return answered_directly(state, text, outcome, "fast_path")
            if unknown_name is not None:
                return answered_directly(state.speaking(unknown_name[0]), text, unknown_name[1], "fast_path")
        return await self._model_turn(state, text)

    async def _languages(self, request: TurnRequest, persona: Persona, known: Conversation | None) -> list[str]:
        """The request's candidate languages, most likely first: its text decides, the named
        language stands unless the text is plainly another; the conversation's language so far
        (else the persona's or the home's) breaks ties, so a short "ja" stays German. Identification
        still loading from start() is waited for at most `language_id.READY_WAIT_S`; past that the
        script, the named and the preferred language are the candidates (their templates decide)."""
        preferred = known.language if known is not None else normalize_language(
            persona.language, default=self._options.language)
        loading = self._language_loading
        if request.language is None and loading is not None and not language_id.ready():
            await asyncio.wait([loading], timeout=language_id.READY_WAIT_S)  # the load goes on
        return language_id.candidates(request.text, request.language, preferred)

    async def _model_turn(
        self, state: TurnState, text: str,
        targets: Sequence[Entity] | None = None,
    ) -> TurnResult:
        """`targets`: the entities the command acts on, when the user already chose them."""
        request, conversation, persona = state.request, state.conversation, state.persona
        conversational, reasoning = self._modes(persona, request)
        home = self._home if persona.home else None
        match = home.match(text, state.language) if home else Match([], [], named=False)
        system = self._system_message(persona, conversational)
        live = home.live_states(match.candidates, {e.entity_id for e in match.best}) if home else ""
        turn_messages = [Message("user", prompt.user_message(text, state.language, live, self._clock_text()))]
        question = persona.home and is_question(text, state.language)
        # the prompt always declares the same tools (its prefix stays cached); what may run this
        # turn is narrower: no device action for a question, nor for a small model's request
        # that names no device
        tools = self._registry.specs(self._offered_tools(persona))
        actions = self._registry.device_actions()
        allowed = [t.name for t in tools if t.name not in actions or not (
            question or (self._constrained and not match.candidates and not targets))]
        reply = ReplyBuilder(state.language, self._options.max_reply_chars, on_chunk=chunk_emitter(state),
                             keep=functools.partial(speakable, self._registry, state, question))
        retries_left = 1
        spoken_results: list[str] = []
        constraint = first_round_constraint(allowed, actions, self._constrained, persona, match, question)
        if constraint is not None and constraint.answer:
            narrowed = self._narrowed(state, text, match, constraint, targets)
            if isinstance(narrowed, TurnResult):
                return narrowed
            constraint = narrowed
        elif persona.home and not self.model_acts and not question and match.candidates and targets is None:
            # the model may not act: a command naming no device of the home is answered here
            fit = self._home.fit(text, state.language, match) if self._home is not None else None
            if fit is not None and fit.missing:
                return not_found(state, text, fit.missing)

        for round_no in range(self._options.max_tool_rounds + 1):
            if round_no > 0:
                constraint = None
            generation = GenerationRequest(
                messages=[system, *conversation.messages, *turn_messages], tools=tools,
                reasoning=reasoning, conversational=conversational,
                max_tokens=self._options.max_tokens, temperature=self._options.temperature,
                constraint=constraint,
                # refused at once (busy) if the queue says it cannot be done in time; once a tool
                # ran, the turn goes on, so its reply can say what happened
                deadline=None if state.finished_calls else state.deadline,
                decode_gate=state.request.decode_gate,
            )
            raw_text, calls, stop_reason = await generate(self._engine, generation, state, reply, allowed)
            if not calls:
                # a reply cut by max_tokens ends on its last whole sentence, not a fragment
                reply.finish(drop_incomplete=stop_reason == "length")
                turn_messages.append(Message("assistant", raw_text if not reply.capped else reply.text))
                break
            if round_no == self._options.max_tool_rounds:
                _LOGGER.info("tool round limit reached in %s", conversation.id)
                turn_messages.append(Message("assistant", raw_text))
                break
            if question:  # a question reads: an action on a device becomes a look at its state
                calls = [as_reading(c, actions, allowed) for c in calls]
            turn_messages.append(Message("assistant", raw_text, tool_calls=calls))
            results = await run_tools(self._registry, calls, state, turn_messages, allowed)
            spoken_results = [speech_of(r, state.language, self._entity_name) for r in results]
            confirm = [str(r.data.get("message")) for r in results
                       if r.data.get("error") == CONFIRMATION_REQUIRED]
            if confirm:  # sensitive actions wait for the user's yes: ask (the last question names them all), and do no more
                reply.say(confirm[-1])
                turn_messages.append(Message("assistant", confirm[-1]))
                spoken_results = []
                break
            if any(not r.ok for r in results):
                if retries_left == 0:
                    break
                retries_left -= 1
                continue
            if constraint is not None or any(c.name in actions for c in calls):
                # what was done is told from the results, not in the model's words
                turn_messages.append(Message("assistant", " ".join(spoken_results)))
                break
        reply.finish()
        said = said_for_actions(state, reply, spoken_results, actions)
        if said:
            reply.say(said)
        conversation.messages += turn_messages
        return TurnResult(conversation.id, state.language, reply.text,
                          tool_calls=state.finished_calls, timings=state.timings)

    def _narrowed(self, state: TurnState, text: str, match: Match, constraint: ToolConstraint,
                  targets: Sequence[Entity] | None) -> ToolConstraint | TurnResult:
        """A grammar-bound command acts only on what it names well (never on a neighbour that
        shares a word): the constraint offering only those, or the turn's answer when the name
        fits nothing ("I couldn't find …") or several devices ("Which one …?"). A device the user
        chose (`targets`) is acted on: the model is offered its actions, not words or other tools."""
        chosen = targets is not None
        if not chosen and self._home is not None:
            fit = self._home.fit(text, state.language, match)
            if fit.missing:
                return not_found(state, text, fit.missing)
            if fit.ambiguous:
                return self._choices.ask_which(state, text, fit.entities)
            targets = fit.entities
        if not targets:
            return constraint
        entity_ids = tuple(e.entity_id for e in targets)
        if chosen:  # its actions only: a fan is not offered set_light
            actions = self._registry.device_actions({e.domain for e in targets})
            return ToolConstraint(tuple(n for n in constraint.tool_names if n in actions), entity_ids)
        return dataclasses.replace(constraint, entity_ids=entity_ids)

    # --- helpers ------------------------------------------------------------------------------

    def _modes(self, persona: Persona, request: TurnRequest | None) -> tuple[bool, Any]:
        """Conversational mode and reasoning: the request's, else the persona's, else the settings'."""
        asked = request.conversational if request is not None else None
        conversational = next(v for v in (asked, persona.conversational, self._settings.conversational_mode)
                              if v is not None)
        reasoning = (request.reasoning if request is not None else None) or persona.reasoning or self._settings.reasoning
        return conversational, reasoning

    def _offered_tools(self, persona: Persona) -> list[str]:
        """The tools the model is told about: the persona's, without device actions for a
        stand-in model that may not run the home."""
        names = self.personas.tool_names(persona)
        if persona.home and not self.model_acts:
            actions = self._registry.device_actions()
            return [n for n in names if n not in actions]
        return list(names)

    def _system_message(self, persona: Persona, conversational: bool) -> Message:
        return prompt.stable_system_message(self._home if persona.home else None, conversational,
                                            persona.instructions)

    def _prime_continuation(self, state: TurnState) -> None:
        """Evaluate the conversation so far while the user listens, so its next turn only pays
        for its new message (engines without `prime` are left alone)."""
        if self.primer.supported:
            self._prime_in_background(list(state.conversation.messages), state.persona)

    def _prime_in_background(self, messages: list[Message], persona: Persona) -> None:
        task = asyncio.create_task(self.primer.prime_continuation(messages, self.stable_request(persona)))
        self._priming.add(task)
        task.add_done_callback(self._priming.discard)

    def _waiting_conversation(self, client: str | None) -> str | None:
        """For a request without a conversation id: the client's previous conversation while it
        waits for an answer (a yes or no, or "which one?", within the confirmation window), else
        None (a new one)."""
        previous = self.conversations.latest_of(client)
        waiting = previous is not None and (self._choices.waiting(previous) or (
            self._confirmations is not None and self._confirmations.waiting(previous)))
        return previous if waiting else None

    def _entity_name(self, entity_id: str) -> str | None:
        return self._home.name_of(entity_id) if self._home is not None else None

    def _trim(self, conversation: Conversation) -> None:
        conversation.trim(self._options.history_tokens, self._message_tokens)

    def _message_tokens(self, message: Message) -> int:
        calls = " ".join(f"{c.name}{json.dumps(c.arguments)}" for c in message.tool_calls)
        return self._engine.count_tokens(message.content + calls) + 4
