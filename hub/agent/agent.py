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
from dataclasses import dataclass, field, replace
from typing import Any, AsyncGenerator, Callable, Protocol, Sequence

from hub.agent import prompt
from hub.agent.conversation import Conversation, ConversationStore
from hub.agent.outcome import spoken_result
from hub.agent.personas import Persona, PersonaBook, UnknownPersona, home_persona
from hub.agent.prefix_primer import PrefixPrimer
from hub.agent.reply import ReplyBuilder
from hub.agent.pending import DirectAnswer
from hub.agent.utterances import claims_action, is_question, looks_like_code, ordinal_position, repeats_itself
from hub.agent.types import (
    ReplyChunk,
    ToolFinished,
    ToolStarted,
    TurnDone,
    TurnEvent,
    TurnRequest,
    TurnResult,
    TurnTimings,
)
from hub.config import HubConfig
from hub.home import language as language_id
from hub.home.entities import Entity
from hub.home.resolve import Fit
from hub.home.policy import CONFIRMATION_REQUIRED
from hub.home.tool_base import ToolContext, ToolRegistry, ToolResult
from hub.llm.types import (
    Done,
    Engine,
    EngineBusy,
    EngineError,
    GenerationRequest,
    MalformedToolCall,
    ModelInfo,
    Message,
    PromptTooLong,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    ToolCallDelta,
    ToolConstraint,
    SMALL_MODEL_PARAMS,
)
from hub.llm.tool_call_syntax import ToolCallSyntaxError, parse_json_call
from hub.locales import SUPPORTED_LANGUAGES, join_list, normalize_language, phrase
from hub.settings import RuntimeSettings

_LOGGER = logging.getLogger(__name__)
MAX_REQUEST_CHARS = 4000
READ_STATE = "get_state"  # the home tool a question's mistaken action call is turned into
_STOPPING = object()  # put in a running turn's events by stop_turns()


class DirectOutcome(Protocol):
    """What a handler that answers without the model returns (the fast path's, a confirmation's)."""

    reply: str
    intent: str
    calls: list[ToolCall]
    results: list[ToolResult]


class FastPathLike(Protocol):
    async def try_handle(self, text: str, language: str, ctx: ToolContext) -> DirectOutcome | None: ...


class ConfirmationsLike(FastPathLike, Protocol):
    def waiting(self, conversation_id: str) -> bool: ...


def model_stands_in(info: ModelInfo) -> bool:
    """The embedded default, or any model under the small-model size: it may chat and read
    states, but device actions come only from the deterministic path unless
    `model_home_control` allows it (its entity choices are not to be trusted)."""
    return info.is_stand_in or 0 < info.n_params < SMALL_MODEL_PARAMS


class HomeView(Protocol):
    """What the agent needs to know about the home to build prompts and narrow tool calls."""

    def entities(self) -> Sequence[Entity]: ...
    def candidates(self, text: str, language: str, focused: bool = False) -> Sequence[Entity]: ...
    def overview(self, entities: Sequence[Entity]) -> str: ...
    def live_states(self, entities: Sequence[Entity]) -> str: ...
    def fit(self, text: str, language: str) -> Fit: ...
    def pick(self, answer: str, among: list[Entity], language: str) -> Entity | None: ...


@dataclass(frozen=True)
class _Choice:
    """A command waiting for the answer to "which one?": its words and the good fits offered."""

    text: str
    options: tuple[Entity, ...]
    source: str
    client: str | None
    asked_at: float


@dataclass
class _TurnState:
    request: TurnRequest
    conversation: Conversation
    language: str
    ctx: ToolContext
    persona: Persona
    deadline: float  # time.monotonic() at which the turn times out
    languages: list[str] = field(default_factory=list)  # the text's candidate languages, in order
    timings: TurnTimings = field(default_factory=TurnTimings)
    started: float = field(default_factory=time.monotonic)
    finished_calls: list[ToolFinished] = field(default_factory=list)


class Agent:
    def __init__(
        self,
        *,
        engine: Engine,
        registry: ToolRegistry,
        settings: RuntimeSettings,
        config: HubConfig,
        home: HomeView | None = None,
        fast_path: FastPathLike | None = None,
        confirmations: ConfirmationsLike | None = None,
        personas: PersonaBook | None = None,
        clock_text: Callable[[], str] = lambda: time.strftime("%A %Y-%m-%d %H:%M"),
    ) -> None:
        self._engine = engine
        self._registry = registry
        self._settings = settings
        self._config = config
        self._home = home
        self._fast_path = fast_path
        self._confirmations = confirmations  # actions held for a "yes" (hub.agent.pending)
        self._clock_text = clock_text
        self.conversations = ConversationStore(idle_seconds=config.conversation_idle_minutes * 60)
        self.languages: list[str] = list(SUPPORTED_LANGUAGES)
        self._constrained = engine.uses_constrained_tools
        self.model_acts = config.model_home_control or not model_stands_in(engine.info)
        self._client_conversations: dict[str, str] = {}  # client → its latest conversation id
        self._choices: dict[str, _Choice] = {}  # conversation id → the command asking "which one?"
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

    async def run(self, request: TurnRequest) -> AsyncGenerator[TurnEvent, None]:
        """Stream one turn's events; the last is always TurnDone. Never raises for turn errors."""
        error = _check_request(request.text)
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
            request.language or persona.language, default=self._config.language)
        if error:
            yield TurnDone(self._failure(request.conversation_id or "", language, error))
            return
        conversation = self.conversations.get_or_create(request.conversation_id, language)
        conversation.language = language
        conversation.persona = persona.key
        if request.client is not None:
            self._remember_client(request.client, conversation.id)
        events: asyncio.Queue[Any] = asyncio.Queue()
        deadline = time.monotonic() + self._config.turn_timeout
        task = asyncio.create_task(self._locked_turn(request, conversation, languages, persona, deadline, events))
        self._open_turns.add(events)
        try:
            while True:
                try:
                    event = await asyncio.wait_for(events.get(), max(0.0, deadline - time.monotonic()))
                except asyncio.TimeoutError:
                    _LOGGER.warning("turn in %s timed out after %ss", conversation.id, self._config.turn_timeout)
                    yield TurnDone(self._failure(conversation.id, language, "timeout"))
                    return
                if event is _STOPPING:
                    _LOGGER.info("turn in %s cut short: the hub is stopping", conversation.id)
                    yield TurnDone(self._failure(conversation.id, language, "stopping"))
                    return
                yield event
                if isinstance(event, TurnDone):
                    return
        finally:
            self._open_turns.discard(events)
            if not task.done():
                task.cancel()

    async def ask(self, request: TurnRequest) -> TurnResult:
        async for event in self.run(request):
            if isinstance(event, TurnDone):
                return event.result
        raise AssertionError("run() ended without TurnDone")  # pragma: no cover

    async def call_tool(self, name: str, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run one tool without the model (MQTT/REST direct calls), under the same persona scope,
        argument validation and policy as the model's calls. Raises UnknownPersona."""
        persona = self.personas.get(ctx.persona)
        ctx = dataclasses.replace(ctx, persona=persona.key)
        result = await self._registry.call(ToolCall(name, arguments), ctx,
                                           allowed=self.personas.tool_names(persona))
        _LOGGER.info("direct tool %s from %s as %s: %s", name, ctx.source, persona.key,
                     "ok" if result.ok else result.data.get("error"))
        return result

    def greet(self, persona_key: str | None, conversation_id: str | None = None) -> TurnResult:
        """Start a conversation with a persona: its greeting (empty when it has none) goes into
        the history as its first words. Raises UnknownPersona."""
        persona = self.personas.get(persona_key)
        language = normalize_language(persona.language, default=self._config.language)
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
            max_tokens=self._config.max_tokens, temperature=self._config.temperature,
        )

    async def start(self) -> None:
        """Prime every persona's stable prefix while idle (and again when it changes), so even a
        persona's first turn only pays for its own message; load language identification."""
        self._language_loading = asyncio.create_task(language_id.prepare())
        if not self.model_acts:
            _LOGGER.info("the model %s is a stand-in: it chats and reads states, device actions come "
                         "only from the fast path (set model_home_control to let it act)", self._engine.info.name)
        elif model_stands_in(self._engine.info):
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
        conversation = self.conversations.get_or_create(conversation_id, self._config.language)
        async with conversation.lock:
            conversation.messages.append(Message("assistant", text))

    def clear_conversations(self) -> None:
        self.conversations.clear()

    # --- one turn -----------------------------------------------------------------------------

    async def _locked_turn(
        self, request: TurnRequest, conversation: Conversation, languages: list[str], persona: Persona,
        deadline: float, events: asyncio.Queue[Any],
    ) -> None:
        language = languages[0]
        async with conversation.lock:
            ctx = ToolContext(conversation.id, language, request.source, request.satellite_id, request.device_id,
                              persona.key, request.client)
            state = _TurnState(request, conversation, language, ctx, persona, deadline, languages)
            try:
                result = await self._turn_fitting_context(state, events.put_nowait)
            except asyncio.CancelledError:
                raise
            except EngineError as err:
                code = ("busy" if isinstance(err, EngineBusy)
                        else "too_long" if isinstance(err, PromptTooLong) else "model")
                _LOGGER.warning("model error in %s: %s", conversation.id, err)
                result = self._failure(conversation.id, language, code)
            except Exception:
                _LOGGER.exception("turn in %s failed", conversation.id)
                result = self._failure(conversation.id, language, "generic")
            result.timings.total_s = time.monotonic() - state.started
            events.put_nowait(TurnDone(result))
            if result.ok and result.path == "model":
                self._prime_continuation(state)

    async def _turn_fitting_context(self, state: _TurnState, emit: Callable[[TurnEvent], None]) -> TurnResult:
        """Run the turn; if the history makes the prompt too long for the model, drop the
        oldest half of it and try again (only while nothing has been done yet)."""
        while True:
            try:
                return await self._turn(state, emit)
            except PromptTooLong:
                turns = state.conversation.turns()
                if not turns or state.finished_calls:
                    raise
                keep = turns[len(turns) // 2 + 1:] if len(turns) > 1 else []
                _LOGGER.info("history of %s too long for the context: dropping %d of %d turns",
                             state.conversation.id, len(turns) - len(keep), len(turns))
                state.conversation.messages = [m for turn in keep for m in turn]

    async def _turn(self, state: _TurnState, emit: Callable[[TurnEvent], None]) -> TurnResult:
        text = state.request.text.strip()
        choice = self._choices.get(state.conversation.id)
        if choice is not None and state.persona.home and \
                (choice.source, choice.client) == (state.request.source, state.request.client):
            del self._choices[state.conversation.id]  # any answer of the asker ends the wait
            chosen = self._chosen(choice, text, state)
            if chosen is not None:  # "the first one", "the fan": the command goes on with that one
                _LOGGER.info("which one in %s: %s", state.conversation.id, chosen.entity_id)
                return await self._model_turn(state, choice.text, emit, targets=[chosen])
        direct: list[tuple[FastPathLike | None, str]] = \
            [(self._confirmations, "confirmation")] if state.persona.home else []
        if self._config.fast_path and state.persona.home:
            direct.append((self._fast_path, "fast_path"))
        for handler, path in direct:
            if handler is None:
                continue
            # the fast path tries the text's candidate languages: the first whose templates match
            # decides; "no such device" only when no language understood it better
            not_found: tuple[str, DirectOutcome] | None = None
            for language in state.languages if path == "fast_path" else [state.language]:
                ctx = replace(state.ctx, language=language)
                outcome = await handler.try_handle(text, language, ctx)
                if outcome is not None and outcome.intent == "not_found":
                    not_found = not_found or (language, outcome)
                elif outcome is not None:
                    return self._direct_answer(self._speaking(state, language), text, outcome, path, emit)
            if not_found is not None:
                return self._direct_answer(self._speaking(state, not_found[0]), text, not_found[1], path, emit)
        return await self._model_turn(state, text, emit)

    async def _languages(self, request: TurnRequest, persona: Persona, known: Conversation | None) -> list[str]:
        """The request's candidate languages, most likely first: its text decides, the named
        language stands unless the text is plainly another; the conversation's language so far
        (else the persona's or the home's) breaks ties, so a short "ja" stays German. Identification
        still loading from start() is waited for at most `language_id.READY_WAIT_S`; past that the
        script, the named and the preferred language are the candidates (their templates decide)."""
        preferred = known.language if known is not None else normalize_language(
            persona.language, default=self._config.language)
        loading = self._language_loading
        if request.language is None and loading is not None and not loading.done():
            await asyncio.wait([loading], timeout=language_id.READY_WAIT_S)  # the load goes on
        return language_id.candidates(request.text, request.language, preferred)

    @staticmethod
    def _speaking(state: _TurnState, language: str) -> _TurnState:
        """The turn goes on in `language` (a later candidate's templates matched)."""
        state.language = language
        state.ctx = replace(state.ctx, language=language)
        state.conversation.language = language
        return state

    def _direct_answer(
        self, state: _TurnState, text: str, outcome: DirectOutcome, path: str, emit: Callable[[TurnEvent], None]
    ) -> TurnResult:
        """A turn answered without the model (fast path, or a confirmed/cancelled action)."""
        for call, result in zip(outcome.calls, outcome.results):
            emit(ToolStarted(call))
            finished = ToolFinished(call, result.ok, result.data, 0.0)
            state.finished_calls.append(finished)
            emit(finished)
        emit(ReplyChunk(outcome.reply))
        # the model sees what happened, so a follow-up turn can refer to it
        state.conversation.messages += [Message("user", text), Message("assistant", outcome.reply)]
        self._trim(state.conversation)
        state.timings.first_token_s = time.monotonic() - state.started
        return TurnResult(state.conversation.id, state.language, outcome.reply,
                          tool_calls=state.finished_calls, timings=state.timings, path=path)

    async def _model_turn(
        self, state: _TurnState, text: str, emit: Callable[[TurnEvent], None],
        targets: Sequence[Entity] | None = None,
    ) -> TurnResult:
        """`targets`: the entities the command acts on, when the user already chose them."""
        request, conversation, persona = state.request, state.conversation, state.persona
        conversational, reasoning = self._modes(persona, request)
        home = self._home if persona.home else None
        candidates = list(home.candidates(text, state.language)) if home else []
        system = self._system_message(persona, conversational)
        live = home.live_states(candidates) if home else ""
        turn_messages = [Message("user", prompt.user_message(text, state.language, live, self._clock_text()))]
        question = persona.home and is_question(text, state.language)
        # the prompt always declares the same tools (its prefix stays cached); what may run this
        # turn is narrower: no device action for a question, nor for a small model's request
        # that names no device
        tools = self._registry.specs(self._offered_tools(persona))
        actions = self._registry.device_actions()
        allowed = [t.name for t in tools if t.name not in actions or not (
            question or (self._constrained and not candidates and not targets))]
        reply = ReplyBuilder(state.language, self._config.max_reply_chars, on_chunk=self._chunk_emitter(state, emit),
                             keep=functools.partial(self._speakable, state, question))
        retries_left = 1
        spoken_results: list[str] = []
        constraint = self._first_round_constraint(persona, [t for t in tools if t.name in allowed], candidates,
                                                  text, state.language, question)
        if constraint is not None and constraint.answer:
            narrowed = self._narrowed(state, text, constraint, targets, emit)
            if isinstance(narrowed, TurnResult):
                return narrowed
            constraint = narrowed

        for round_no in range(self._config.max_tool_rounds + 1):
            if round_no > 0:
                constraint = None
            generation = GenerationRequest(
                messages=[system, *conversation.messages, *turn_messages], tools=tools,
                reasoning=reasoning, conversational=conversational,
                max_tokens=self._config.max_tokens, temperature=self._config.temperature,
                constraint=constraint,
                # refused at once (busy) if the queue says it cannot be done in time; once a tool
                # ran, the turn goes on, so its reply can say what happened
                deadline=None if state.finished_calls else state.deadline,
            )
            raw_text, calls, stop_reason = await self._generate(generation, state, reply, allowed)
            if not calls:
                # a reply cut by max_tokens ends on its last whole sentence, not a fragment
                reply.finish(drop_incomplete=stop_reason == "length")
                turn_messages.append(Message("assistant", raw_text if not reply.capped else reply.text))
                break
            if round_no == self._config.max_tool_rounds:
                _LOGGER.info("tool round limit reached in %s", conversation.id)
                turn_messages.append(Message("assistant", raw_text))
                break
            if question:  # a question reads: an action on a device becomes a look at its state
                calls = [_as_reading(c, actions, allowed) for c in calls]
            turn_messages.append(Message("assistant", raw_text, tool_calls=calls))
            results = await self._run_tools(calls, state, emit, turn_messages, allowed)
            spoken_results = [self._spoken(r, state.language) for r in results]
            confirm = [str(r.data.get("message")) for r in results
                       if r.data.get("error") == CONFIRMATION_REQUIRED]
            if confirm:  # a sensitive action waits for the user's yes: ask, and do no more
                reply.say(" ".join(confirm))
                turn_messages.append(Message("assistant", " ".join(confirm)))
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
        said = self._said_for_actions(state, reply, spoken_results, actions)
        if said:
            reply.say(said)
        conversation.messages += turn_messages
        self._trim(conversation)
        return TurnResult(conversation.id, state.language, reply.text,
                          tool_calls=state.finished_calls, timings=state.timings)

    def _narrowed(self, state: _TurnState, text: str, constraint: ToolConstraint,
                  targets: Sequence[Entity] | None, emit: Callable[[TurnEvent], None]) -> ToolConstraint | TurnResult:
        """A grammar-bound command acts only on what it names well (never on a neighbour that
        shares a word): the constraint offering only those, or the turn's answer when the name
        fits nothing ("I couldn't find …") or several devices ("Which one …?")."""
        if targets is None and self._home is not None:
            fit = self._home.fit(text, state.language)
            if fit.missing:
                answer = DirectAnswer(phrase(state.language, "entity.not_found", name=fit.missing), "not_found")
                return self._direct_answer(state, text, answer, "resolution", emit)
            if fit.ambiguous:
                return self._ask_which(state, text, fit.entities, emit)
            targets = fit.entities
        if not targets:
            return constraint
        return dataclasses.replace(constraint, entity_ids=tuple(e.entity_id for e in targets))

    def _ask_which(self, state: _TurnState, text: str, options: Sequence[Entity],
                   emit: Callable[[TurnEvent], None]) -> TurnResult:
        """"Which one: A or B?", and keep the command for the next turn's answer."""
        self._choices[state.conversation.id] = _Choice(text, tuple(options), state.request.source,
                                                       state.request.client, time.monotonic())
        question = phrase(state.language, "entity.ambiguous",
                          options=join_list([e.name for e in options], state.language))
        return self._direct_answer(state, text, DirectAnswer(question, "which_one"), "resolution", emit)

    def _chosen(self, choice: _Choice, answer: str, state: _TurnState) -> Entity | None:
        """The option an answer names or counts to ("B", "the second one") within the
        confirmation window; None otherwise."""
        if time.monotonic() - choice.asked_at > self._config.confirm_seconds or self._home is None:
            return None
        named = self._home.pick(answer, list(choice.options), state.language)
        if named is not None:
            return named
        position = ordinal_position(answer, state.language)
        return choice.options[position] if position is not None and position < len(choice.options) else None

    def _said_for_actions(self, state: _TurnState, reply: ReplyBuilder, spoken_results: list[str],
                          actions: frozenset[str]) -> str:
        """What the hub adds after the model's words: the calls' outcomes when a device action
        ran or the last calls failed, else what really happened when the model's words claimed an
        action (or were all refused), else nothing."""
        acted = [f for f in state.finished_calls if f.call.name in actions]
        failed_last = spoken_results and any(not f.ok for f in state.finished_calls[-len(spoken_results):])
        if acted or failed_last:
            return " ".join(dict.fromkeys(s for s in spoken_results if s))
        if state.persona.home and any(claims_action(d, state.language, also="en") for d in reply.dropped):
            return phrase(state.language, "action.nothing_done")
        if not reply.text:
            return " ".join(s for s in spoken_results if s) or phrase(state.language, "error.not_understood")
        return ""

    def _speakable(self, state: _TurnState, question: bool, sentence: str) -> bool:
        """Whether a sentence of the model may be spoken: never JSON or a call written as text,
        and, for the home, no claim of an action unless one succeeded in this turn."""
        if looks_like_code(sentence):
            return False
        if state.persona.home and not question and claims_action(sentence, state.language, also="en"):
            return any(f.ok and not self._reads_only(f.call.name) for f in state.finished_calls)
        return True

    def _reads_only(self, tool_name: str) -> bool:
        return getattr(self._registry.get(tool_name), "changes_home", None) is False

    async def _generate(
        self, generation: GenerationRequest, state: _TurnState, reply: ReplyBuilder, allowed: Sequence[str],
    ) -> tuple[str, list[ToolCall], str]:
        """Stream one model round into the reply; the raw text, the calls and the stop reason.

        Text that starts like JSON is held back: a call written without its format's markers
        (`{"name": …, "arguments": …}` naming an offered tool) is read as the call it is. A round
        that starts repeating itself is ended there.
        """
        raw: list[str] = []
        calls: list[ToolCall] = []
        stop_reason = "stop"
        held = False
        stream = self._engine.stream(generation)
        try:
            async for delta in stream:
                if isinstance(delta, TextDelta):
                    raw.append(delta.text)
                    text = "".join(raw)
                    held = held or (not reply.text and text.lstrip()[:1] in ("{", "["))
                    if not held:
                        reply.add_text(delta.text)
                    if repeats_itself(text[-400:]):
                        _LOGGER.info("the model repeats itself in %s: reply ended", state.conversation.id)
                        reply.stop()
                        stop_reason = "loop"
                        break
                    if reply.capped:
                        break
                elif isinstance(delta, ToolCallDelta):
                    calls.append(delta.call)
                elif isinstance(delta, MalformedToolCall):
                    calls.append(ToolCall("invalid_tool_call", {"raw": delta.raw[:300], "error": delta.error},
                                          id=f"bad_{len(calls) + 1}"))
                elif isinstance(delta, ThinkingDelta):
                    _LOGGER.debug("thinking: %s", delta.text)
                elif isinstance(delta, Done):
                    state.timings.add_usage(delta.usage)
                    stop_reason = delta.usage.stop_reason
        finally:
            await stream.aclose()
        text = "".join(raw)
        if held:
            written = _calls_written_as_text(text, allowed)
            if written:
                return "", [*calls, *written], stop_reason
            reply.add_text(text)  # not a call: the sentence filter keeps JSON from being spoken
        return text, calls, stop_reason

    async def _run_tools(
        self, calls: list[ToolCall], state: _TurnState, emit: Callable[[TurnEvent], None],
        turn_messages: list[Message], allowed: Sequence[str],
    ) -> list[ToolResult]:
        results = []
        for call in calls:
            emit(ToolStarted(call))
            started = time.monotonic()
            if call.name == "invalid_tool_call":
                result = ToolResult(ok=False, data={
                    "error": "malformed_call",
                    "message": f"Your tool call could not be read ({call.arguments.get('error')}). "
                               "Write one valid call."})
            else:
                result = await self._registry.call(call, state.ctx, allowed=allowed)
            seconds = time.monotonic() - started
            state.timings.tools_s += seconds
            finished = ToolFinished(call, result.ok, result.data, seconds)
            state.finished_calls.append(finished)
            emit(finished)
            _LOGGER.info("tool %s(%s) in %s from %s: %s", call.name, json.dumps(call.arguments),
                         state.conversation.id, state.ctx.source, "ok" if result.ok else result.data.get("error"))
            turn_messages.append(Message("tool", json.dumps(result.data, ensure_ascii=False),
                                         name=call.name, tool_call_id=call.id or None))
            results.append(result)
        return results

    # --- helpers ------------------------------------------------------------------------------

    def _chunk_emitter(self, state: _TurnState, emit: Callable[[TurnEvent], None]) -> Callable[[str], None]:
        def on_chunk(text: str) -> None:
            if not state.timings.first_token_s:
                state.timings.first_token_s = time.monotonic() - state.started
            emit(ReplyChunk(text))
        return on_chunk

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

    def _first_round_constraint(self, persona: Persona, tools: Sequence[Any], candidates: Sequence[Entity],
                                text: str, language: str, question: bool) -> ToolConstraint | None:
        """A small model's first round on a command calls a tool on the request's candidates or
        answers in words (grammar-bound); a persona with tool_choice "required" must call one of
        its tools, whatever the model."""
        if not tools:
            return None
        names = tuple(t.name for t in tools)
        acts = bool(self._registry.device_actions() & set(names))
        if self._constrained and acts and not question and candidates and self._home is not None:
            focused = self._home.candidates(text, language, focused=True)
            return ToolConstraint(names, tuple(e.entity_id for e in focused), answer=True)
        if persona.tool_choice == "required":
            return ToolConstraint(names, ())
        return None

    def _system_message(self, persona: Persona, conversational: bool) -> Message:
        return prompt.stable_system_message(self._home if persona.home else None, conversational,
                                            persona.instructions)

    def _prime_continuation(self, state: _TurnState) -> None:
        """Evaluate the conversation so far while the user listens, so its next turn only pays
        for its new message (engines without `prime` are left alone)."""
        if not self.primer.supported:
            return
        history = list(state.conversation.messages)
        persona = state.persona
        task = asyncio.create_task(self.primer.prime_continuation(history, self.stable_request(persona)))
        self._priming.add(task)
        task.add_done_callback(self._priming.discard)

    def _waiting_conversation(self, client: str | None) -> str | None:
        """For a request without a conversation id: the client's previous conversation while it
        waits for an answer (a yes or no, or "which one?", within the confirmation window), else
        None (a new one)."""
        previous = self._client_conversations.get(client) if client is not None else None
        if previous is None:
            return None
        choice = self._choices.get(previous)
        if choice is not None and time.monotonic() - choice.asked_at <= self._config.confirm_seconds:
            return previous
        if self._confirmations is not None and self._confirmations.waiting(previous):
            return previous
        return None

    def _remember_client(self, client: str, conversation_id: str) -> None:
        live = set(self.conversations.ids())
        for known in [c for c, cid in self._client_conversations.items() if cid not in live]:
            del self._client_conversations[known]
        self._client_conversations[client] = conversation_id

    def _spoken(self, result: ToolResult, language: str) -> str:
        return spoken_result(result, language, self._entity_name)

    def _entity_name(self, entity_id: str) -> str | None:
        if self._home is None:
            return None
        return next((e.name for e in self._home.entities() if e.entity_id == entity_id), None)

    def _trim(self, conversation: Conversation) -> None:
        conversation.trim(self._config.history_tokens, self._message_tokens)

    def _message_tokens(self, message: Message) -> int:
        calls = " ".join(f"{c.name}{json.dumps(c.arguments)}" for c in message.tool_calls)
        return self._engine.count_tokens(message.content + calls) + 4

    def _failure(self, conversation_id: str, language: str, code: str) -> TurnResult:
        return TurnResult(conversation_id, language, phrase(language, f"error.{code}"), ok=False, error=code)


def _check_request(text: str) -> str | None:
    if not text or not text.strip():
        return "empty"
    if len(text) > MAX_REQUEST_CHARS:
        return "too_long"
    return None


def _as_reading(call: ToolCall, actions: frozenset[str], allowed: Sequence[str]) -> ToolCall:
    """A device action the model called for a question, as a look at that device's state."""
    entity_id = call.arguments.get("entity_id")
    if call.name in actions and isinstance(entity_id, str) and READ_STATE in allowed:
        return ToolCall(READ_STATE, {"entity_id": entity_id}, id=call.id)
    return call


def _calls_written_as_text(text: str, allowed: Sequence[str]) -> list[ToolCall]:
    """`{"name": …, "arguments": …}` (or a list of them) written as plain text, when every name
    is a tool on offer; [] for anything else."""
    try:
        parsed = parse_json_call(text.strip().rstrip("."))
    except ToolCallSyntaxError:
        return []
    if not all(name in allowed for name, _ in parsed):
        return []
    return [ToolCall(name, arguments, id=f"text_{n + 1}") for n, (name, arguments) in enumerate(parsed)]
