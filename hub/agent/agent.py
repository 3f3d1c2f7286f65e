"""The turn loop: request → (fast path | prompt → model → tool calls → results → model) → reply.

The agent holds no network code: interfaces hand it `TurnRequest`s and stream its events.
Each turn runs as its own task so a deadline can end it cleanly whatever it is waiting on,
and turns of one conversation run one at a time, in arrival order.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import time
from dataclasses import dataclass, field, replace
from typing import Any, AsyncIterator, Callable, Protocol, Sequence

from hub.agent import prompt
from hub.agent.conversation import Conversation, ConversationStore
from hub.agent.personas import Persona, PersonaBook, UnknownPersona, home_persona
from hub.agent.prefix_primer import PrefixPrimer
from hub.agent.reply import ReplyBuilder
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
from hub.home.policy import CONFIRMATION_REQUIRED, SPOKEN_ERRORS
from hub.home.tool_base import ToolContext, ToolRegistry, ToolResult
from hub.llm.types import (
    Done,
    Engine,
    EngineBusy,
    EngineError,
    GenerationRequest,
    MalformedToolCall,
    Message,
    PromptTooLong,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    ToolCallDelta,
    ToolConstraint,
)
from hub.locales import SUPPORTED_LANGUAGES, normalize_language, phrase
from hub.settings import RuntimeSettings

_LOGGER = logging.getLogger(__name__)
MAX_REQUEST_CHARS = 4000


class FastPathLike(Protocol):
    async def try_handle(self, text: str, language: str, ctx: ToolContext): ...


class HomeView(Protocol):
    """What the agent needs to know about the home to build prompts and narrow tool calls."""

    def entities(self) -> Sequence[Entity]: ...
    def candidates(self, text: str, language: str, focused: bool = False) -> Sequence[Entity]: ...
    def overview(self, entities: Sequence[Entity]) -> str: ...
    def live_states(self, entities: Sequence[Entity]) -> str: ...


@dataclass
class _TurnState:
    request: TurnRequest
    conversation: Conversation
    language: str
    ctx: ToolContext
    persona: Persona
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
        confirmations: FastPathLike | None = None,
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
        # without a book: the home assistant alone, with every registered tool
        self.personas = personas or PersonaBook(home_persona(prompt.ASSISTANT_INSTRUCTIONS),
                                                home_tools=registry.names())
        # keep the default persona's stable prefix and each conversation's continuation warm
        self.primer = PrefixPrimer(engine, self.stable_request)
        self.persona_primers: list[PrefixPrimer] = []  # the other personas' prefixes (from start())
        self._priming: set[asyncio.Task[bool]] = set()
        self._language_loading: asyncio.Task[bool] | None = None  # from start()

    # --- public API ---------------------------------------------------------------------------

    async def run(self, request: TurnRequest) -> AsyncIterator[TurnEvent]:
        """Stream one turn's events; the last is always TurnDone. Never raises for turn errors."""
        error = _check_request(request.text)
        known = self.conversations.get(request.conversation_id) if request.conversation_id else None
        try:
            persona = self.personas.choose(request.persona or (known.persona if known else None),
                                           request.satellite_id, request.device_id)
        except UnknownPersona as err:
            _LOGGER.warning("%s", err)
            persona, error = self.personas.get(None), error or "unknown_persona"
        languages = await self._languages(request, persona) if not error else []
        language = languages[0] if languages else normalize_language(
            request.language or persona.language, default=self._config.language)
        if error:
            yield TurnDone(self._failure(request.conversation_id or "", language, error))
            return
        conversation = self.conversations.get_or_create(request.conversation_id, language)
        conversation.language = language
        conversation.persona = persona.key
        events: asyncio.Queue[TurnEvent] = asyncio.Queue()
        task = asyncio.create_task(self._locked_turn(request, conversation, languages, persona, events))
        deadline = time.monotonic() + self._config.turn_timeout
        try:
            while True:
                try:
                    event = await asyncio.wait_for(events.get(), max(0.0, deadline - time.monotonic()))
                except asyncio.TimeoutError:
                    _LOGGER.warning("turn in %s timed out after %ss", conversation.id, self._config.turn_timeout)
                    yield TurnDone(self._failure(conversation.id, language, "timeout"))
                    return
                yield event
                if isinstance(event, TurnDone):
                    return
        finally:
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
        ctx = ToolContext(ctx.conversation_id, ctx.language, ctx.source, ctx.satellite_id, ctx.device_id,
                          persona.key)
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
            tools=self._registry.specs(list(self.personas.tool_names(persona))),
            reasoning=reasoning, conversational=conversational,
            max_tokens=self._config.max_tokens, temperature=self._config.temperature,
        )

    async def start(self) -> None:
        """Prime every persona's stable prefix while idle (and again when it changes), so even a
        persona's first turn only pays for its own message; load language identification."""
        self._language_loading = asyncio.create_task(language_id.prepare())
        self.persona_primers = [PrefixPrimer(self._engine, functools.partial(self.stable_request, persona))
                                for persona in self.personas.all() if persona.key != self.personas.default]
        for primer in (self.primer, *self.persona_primers):
            await primer.start()

    async def wait_primed(self) -> None:
        """Wait until the conversations' background priming has finished (tests, benches)."""
        while self._priming:
            await asyncio.gather(*self._priming, return_exceptions=True)

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
        events: asyncio.Queue[TurnEvent],
    ) -> None:
        language = languages[0]
        async with conversation.lock:
            ctx = ToolContext(conversation.id, language, request.source, request.satellite_id, request.device_id,
                              persona.key)
            state = _TurnState(request, conversation, language, ctx, persona, languages)
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
        direct = [(self._confirmations, "confirmation")] if state.persona.home else []
        if self._config.fast_path and state.persona.home:
            direct.append((self._fast_path, "fast_path"))
        for handler, path in direct:
            if handler is None:
                continue
            # the fast path tries the text's candidate languages: the first whose templates match
            # decides; "no such device" only when no language understood it better
            not_found: tuple[str, Any] | None = None
            for language in state.languages if path == "fast_path" else [state.language]:
                ctx = replace(state.ctx, language=language)
                outcome = await handler.try_handle(text, language, ctx)
                if outcome is not None and getattr(outcome, "intent", None) == "not_found":
                    not_found = not_found or (language, outcome)
                elif outcome is not None:
                    return self._direct_answer(self._speaking(state, language), text, outcome, path, emit)
            if not_found is not None:
                return self._direct_answer(self._speaking(state, not_found[0]), text, not_found[1], path, emit)
        return await self._model_turn(state, text, emit)

    async def _languages(self, request: TurnRequest, persona: Persona) -> list[str]:
        """The request's candidate languages, most likely first: its text decides, the named
        language stands unless the text is plainly another, the persona's or the home's
        language breaks ties. Waits for identification still loading from start()."""
        preferred = normalize_language(persona.language, default=self._config.language)
        loading = self._language_loading
        if request.language is None and loading is not None and not loading.done():
            await asyncio.shield(loading)
        return language_id.candidates(request.text, request.language, preferred)

    @staticmethod
    def _speaking(state: _TurnState, language: str) -> _TurnState:
        """The turn goes on in `language` (a later candidate's templates matched)."""
        state.language = language
        state.ctx = replace(state.ctx, language=language)
        state.conversation.language = language
        return state

    def _direct_answer(
        self, state: _TurnState, text: str, outcome: Any, path: str, emit: Callable[[TurnEvent], None]
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
        self, state: _TurnState, text: str, emit: Callable[[TurnEvent], None]
    ) -> TurnResult:
        request, conversation, persona = state.request, state.conversation, state.persona
        conversational, reasoning = self._modes(persona, request)
        home = self._home if persona.home else None
        candidates = list(home.candidates(text, state.language)) if home else []
        system = self._system_message(persona, conversational)
        live = home.live_states(candidates) if home else ""
        turn_messages = [Message("user", prompt.user_message(text, state.language, live, self._clock_text()))]
        allowed = self.personas.tool_names(persona)
        tools = self._registry.specs(list(allowed))
        reply = ReplyBuilder(state.language, self._config.max_reply_chars, on_chunk=self._chunk_emitter(state, emit))
        retries_left = 1
        spoken_results: list[str] = []

        for round_no in range(self._config.max_tool_rounds + 1):
            constraint = self._first_round_constraint(persona, tools, candidates, text, state.language) \
                if round_no == 0 else None
            generation = GenerationRequest(
                messages=[system, *conversation.messages, *turn_messages], tools=tools,
                reasoning=reasoning, conversational=conversational,
                max_tokens=self._config.max_tokens, temperature=self._config.temperature,
                constraint=constraint,
            )
            raw_text, calls, stop_reason = await self._generate(generation, state, reply)
            if not calls:
                # a reply cut by max_tokens ends on its last whole sentence, not a fragment
                reply.finish(drop_incomplete=stop_reason == "length")
                turn_messages.append(Message("assistant", raw_text if not reply.capped else reply.text))
                break
            if round_no == self._config.max_tool_rounds:
                _LOGGER.info("tool round limit reached in %s", conversation.id)
                turn_messages.append(Message("assistant", raw_text))
                break
            turn_messages.append(Message("assistant", raw_text, tool_calls=calls))
            results = await self._run_tools(calls, state, emit, turn_messages, allowed)
            questions = [str(r.data.get("message")) for r in results
                         if r.data.get("error") == CONFIRMATION_REQUIRED]
            if questions:  # a sensitive action waits for the user's yes: ask, and do no more
                reply.add_text(" " + " ".join(questions))
                turn_messages.append(Message("assistant", " ".join(questions)))
                break
            if any(not r.ok for r in results):
                if retries_left == 0:
                    spoken_results = [_speech_of(r, state.language) for r in results]
                    break
                retries_left -= 1
            if constraint is not None and all(r.ok for r in results):
                # a small model phrases results badly: speak the tools' own confirmations
                spoken_results = [_speech_of(r, state.language) for r in results]
                turn_messages.append(Message("assistant", " ".join(spoken_results)))
                break
            spoken_results = [_speech_of(r, state.language) for r in results]
        reply.finish()
        if not reply.text:
            fallback = " ".join(s for s in spoken_results if s) or phrase(state.language, "action.done")
            reply.add_text(fallback)
            reply.finish()
        conversation.messages += turn_messages
        self._trim(conversation)
        return TurnResult(conversation.id, state.language, reply.text,
                          tool_calls=state.finished_calls, timings=state.timings)

    async def _generate(
        self, generation: GenerationRequest, state: _TurnState, reply: ReplyBuilder
    ) -> tuple[str, list[ToolCall], str]:
        """Stream one model round into the reply; the raw text, the calls and the stop reason."""
        raw: list[str] = []
        calls: list[ToolCall] = []
        stop_reason = "stop"
        stream = self._engine.stream(generation)
        try:
            async for delta in stream:
                if isinstance(delta, TextDelta):
                    raw.append(delta.text)
                    reply.add_text(delta.text)
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
        return "".join(raw), calls, stop_reason

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

    def _first_round_constraint(self, persona: Persona, tools: Sequence[Any], candidates: Sequence[Entity],
                                text: str, language: str) -> ToolConstraint | None:
        """A small model's first round calls a tool on the request's candidates (grammar-bound);
        a persona with tool_choice "required" must call one of its tools, whatever the model."""
        if not tools:
            return None
        names = tuple(t.name for t in tools)
        if self._constrained and candidates and self._home is not None:
            focused = self._home.candidates(text, language, focused=True)
            return ToolConstraint(names, tuple(e.entity_id for e in focused))
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


def _speech_of(result: ToolResult, language: str) -> str:
    if result.speech:
        return result.speech
    if not result.ok and result.data.get("error") in SPOKEN_ERRORS:
        return str(result.data.get("message"))  # already a sentence for the user
    if not result.ok:
        return phrase(language, "action.failed", reason=str(result.data.get("message", result.data.get("error", ""))))
    return phrase(language, "action.done")
