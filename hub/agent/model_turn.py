"""The model's turn: its context (prompt, offered and allowed tools, first-round constraint),
its rounds (the stream read into the reply: `agent.model_stream`; the calls run, their results
fed back) and what the hub says about them; and the history fitted to the model's context.

Every call goes through `ToolRegistry.call` under the turn's allowed tools. The model's words
about an action are checked against what its calls did (`agent.tool_round`); a stand-in's reply
for the home is spoken sentence by sentence as far as it passes the judge (`agent.judged_release`),
else the hub's fallback.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import time
from dataclasses import dataclass
from typing import Callable, Sequence

from hub.agent import prompt
from hub.agent.call_fit import CallFit
from hub.agent.choices import Choices
from hub.agent.judged_release import JudgedRelease
from hub.agent.personas import Persona, PersonaBook
from hub.agent.ports import ActionReading, AgentOptions, HomeView, LanguageIdentifier
from hub.agent.prompt_echo import RECITED, PromptEcho
from hub.agent.model_stream import generate
from hub.agent.relevance import is_chit_chat
from hub.agent.reply import FIRST_CLAUSE_WORDS, ReplyBuilder
from hub.agent.sentences import first_clause
from hub.agent.speakable import make_speakable
from hub.agent.stand_in_routes import fallback, stand_in_judge
from hub.agent.turn import TurnState, not_found, not_understood
from hub.agent.tool_round import as_reading, run_tools, said_for_actions, withheld
from hub.agent.types import ReplyChunk, TurnRequest, TurnResult
from hub.agent.utterances import in_no_language, is_question
from hub.core.speech import CONFIRMATION_REQUIRED, speech_of
from hub.core.tools import ToolRegistry
from hub.home.device_text import example_name, instruction_texts
from hub.home.entities import Entity
from hub.home.places import Place
from hub.home.resolve import Match
from hub.home.vocabulary import speaks_of_home
from hub.llm.text_tools import text_tool_instructions
from hub.core.messages import Message, ToolSpec
from hub.llm.types import Engine, GenerationRequest, Reasoning, ToolConstraint
from hub.settings import RuntimeSettings

_LOGGER = logging.getLogger(__name__)
_NAME_WORDS = 2  # "I couldn't find …" only for what may be a name, not for words the hub did not get


@dataclass
class _Context:
    """What the model is given this turn, and what it has said and called so far."""

    text: str  # the command the model answers
    targets: Sequence[Entity] | None  # the devices the user chose for it ("which one?")
    match: Match
    question: bool
    system: Message
    tools: list[ToolSpec]
    conversational: bool
    reasoning: Reasoning
    actions: frozenset[str]
    allowed: list[str]
    reply: ReplyBuilder
    messages: list[Message]  # the turn's, after the history
    echo: PromptEcho
    release: JudgedRelease | None  # a stand-in's words for the home: spoken as far as they pass the judge


class ModelTurn:
    """Answers a turn with the model, under its persona's prompt and tools."""

    def __init__(self, *, engine: Engine, registry: ToolRegistry, settings: RuntimeSettings, options: AgentOptions,
                 home: HomeView | None, choices: Choices, personas: Callable[[], PersonaBook], model_acts: bool,
                 stand_in: bool, identify: LanguageIdentifier, reading: ActionReading,
                 clock_text: Callable[[], str]) -> None:
        self._engine = engine
        self._registry = registry
        self._settings = settings
        self._options = options
        self._home = home
        self._choices = choices
        self._personas = personas  # the agent's book, as it is now
        self.model_acts = model_acts
        self.stand_in = stand_in
        # a stand-in's sentences are checked for their language (`tool_round.withheld`)
        self._reply_languages = identify if stand_in else None
        self._clock_text = clock_text
        self._constrained = engine.uses_constrained_tools
        # a device action runs only when it fits the request's words (`agent.call_fit`)
        self._fit = CallFit(home, reading, registry.device_actions(), choices) if home is not None else None
        self._reading = reading

    def log_role(self) -> None:
        """Say in the log whether the model may act on devices."""
        if not self.model_acts:
            _LOGGER.info("the model %s is a stand-in: it chats and reads states, device actions come "
                         "only from the fast path (set model_home_control to let it act)", self._engine.info.name)
        elif self.stand_in:
            _LOGGER.info("the model %s is a stand-in, allowed to control devices (model_home_control)",
                         self._engine.info.name)

    def stable_request(self, persona: Persona) -> GenerationRequest:
        """What every turn of `persona` starts with."""
        conversational, reasoning = self._modes(persona, None)
        return GenerationRequest(
            messages=[self._system_message(persona, conversational)],
            tools=self._registry.specs(self._offered_tools(persona)),
            reasoning=reasoning, conversational=conversational,
            max_tokens=self._options.max_tokens, temperature=self._options.temperature,
        )

    async def answer(self, state: TurnState, text: str, targets: Sequence[Entity] | None = None) -> TurnResult:
        """`targets`: the entities the command acts on, when the user already chose them."""
        persona = state.persona
        context = self._context(state, text, targets)
        constraint = first_round_constraint(context.allowed, context.actions, self._constrained, persona,
                                            context.match, context.question)
        if constraint is not None and constraint.answer:
            narrowed = self._narrowed(state, text, context.match, constraint, targets)
            if isinstance(narrowed, TurnResult):
                return narrowed
            constraint = narrowed
        elif persona.home and self._reply_languages is not None and targets is None \
                and in_no_language(text, state.language, self._reply_languages.confidences):
            # a stand-in makes nonsense of words of no language ("blorp zibble uat" → "Frodo
            # breath. Frodo bros."): what was not understood is said plainly instead
            return not_understood(state, text, self._example_name(context.match))
        elif (persona.home and not self.model_acts and not context.question and targets is None
              and (context.match.candidates or speaks_of_home(text, state.language))
              and not is_chit_chat(text, state.language)):  # "do you like music" is no device
            # the model may not act, so a command about the home the fast path did not carry out
            # is answered here: "I couldn't find …", or what was not understood and what works
            fit = self._home.fit(text, state.language, context.match) if self._home is not None else None
            if fit is not None and fit.missing and context.match.candidates and len(fit.missing.split()) <= _NAME_WORDS:
                return not_found(state, text, fit.missing)
            return not_understood(state, text, self._example_name(context.match))
        spoken_results = await self._rounds(state, context, constraint)
        context.reply.finish()
        said = said_for_actions(state, context.reply, spoken_results, context.actions)
        if context.release is not None:
            text = self._judged(state, context, context.release, said)
        else:
            context.reply.say(said)
            text = context.reply.text
        withheld = [reason for reason, _ in context.reply.withheld]
        withheld += context.release.faults if context.release is not None else []
        state.conversation.messages += context.messages
        for reason, sentence in context.reply.withheld:
            _LOGGER.debug("not spoken in %s (%s): %s", state.conversation.id, reason, sentence)
        return TurnResult(state.conversation.id, state.language, text, tool_calls=state.finished_calls,
                          timings=state.timings, withheld=withheld)

    def _judged(self, state: TurnState, context: _Context, release: JudgedRelease, said: str) -> str:
        """What a stand-in's reply spoke (`JudgedRelease`) and what the hub `said` after it; or,
        when none of the model's words passed the judge and no call acted, the hub's fallback,
        spoken now. The history keeps what was spoken."""
        release.finish()
        acted = any(f.call.name in context.actions for f in state.finished_calls)
        if acted or release.spoken:
            context.reply.say(said)  # what the calls did, or what really happened
        if acted:
            return release.spoken  # the history keeps the calls and what they did
        text = release.spoken
        if not text:
            text = fallback(state.language, self._home.entities() if self._home else ())
            if len(text) > self._options.max_reply_chars:  # cut like any reply
                text = make_speakable(text, state.language, self._options.max_reply_chars)
            chunk_emitter(state)(text)
        if context.messages and context.messages[-1].role == "assistant":
            context.messages[-1] = Message("assistant", text)
        return text

    def _judge(self, state: TurnState, text: str, echo: PromptEcho) -> Callable[[str], list[str]]:
        """The judge's faults in a stand-in's reply to `text`, by what the turn's calls read so far."""
        entities = list(self._home.entities()) if self._home is not None else []

        def faults(reply: str) -> list[str]:
            read = [json.dumps(f.data, ensure_ascii=False, default=str) for f in state.finished_calls]
            return stand_in_judge(state.language, text, echo, read, self._reply_languages, entities).faults(reply)
        return faults

    def _context(self, state: TurnState, text: str, targets: Sequence[Entity] | None) -> _Context:
        persona = state.persona
        conversational, reasoning = self._modes(persona, state.request)
        home = self._home if persona.home else None
        place = Place(state.ctx.area, state.ctx.floor) if state.ctx.area else None
        match = home.match(text, state.language, place) if home else Match([], [], named=False)
        live = home.live_states(match.candidates, {e.entity_id for e in match.best}) if home else ""
        question = persona.home and is_question(text, state.language)
        # the prompt declares the same tools from turn to turn (its prefix stays cached) until the
        # home or its timers change what could run; what may run this turn is narrower: no device
        # action for a question, nor for a small model's request that names no device
        tools = self._registry.specs(self._offered_tools(persona))
        actions = self._registry.device_actions()
        allowed = [t.name for t in tools if t.name not in actions or not (
            question or (self._constrained and not match.candidates and not targets))]
        system = self._system_message(persona, conversational)
        messages = [Message("user", prompt.user_message(text, state.language, live, self._clock_text(), place,
                                                        state.request.extra_system_prompt))]
        echo = self._echo(persona, system, tools, messages[0].content, text)
        # a stand-in's words for the home are spoken as far as they pass the judge; a fault
        # ends the reply (below) there
        release = JudgedRelease(self._judge(state, text, echo), chunk_emitter(state), halt=lambda: reply.stop(),
                                first_clause=functools.partial(first_clause, language=state.language,
                                                               words=FIRST_CLAUSE_WORDS)) \
            if self.stand_in and persona.home else None
        reply = ReplyBuilder(state.language, self._options.max_reply_chars,
                             on_chunk=release.chunk if release else chunk_emitter(state),
                             on_said=release.say if release else None,
                             withhold=functools.partial(withheld, self._registry, state, question, echo,
                                                        self._reply_languages), early_clause=not self.stand_in,
                             # a stand-in reciting its prompt is halted: the hub's fallback is spoken
                             halting=RECITED if release else frozenset())
        return _Context(text, targets, match, question, system, tools, conversational, reasoning, actions, allowed,
                        reply, messages, echo, release)

    def _echo(self, persona: Persona, system: Message, tools: list[ToolSpec], user_message: str,
              text: str) -> PromptEcho:
        """The check of reply sentences against this turn's prompt (`PromptEcho`): the user
        message but its request, and the tools as the model reads them."""
        declared = text_tool_instructions(tools)
        instructions = [persona.instructions, prompt.CONVERSATIONAL_INSTRUCTIONS, prompt.WRITTEN_INSTRUCTIONS,
                        declared, prompt.OVERVIEW_HEADING, prompt.STATES_HEADING, user_message.split("\n", 1)[0]]
        entities = self._home.entities() if persona.home and self._home is not None else []
        return PromptEcho(given=[system.content, declared, user_message.removesuffix(text)], instructions=instructions,
                          request=text, tool_names=[t.name for t in tools], entity_ids=[e.entity_id for e in entities],
                          device_texts=instruction_texts(entities))

    async def _rounds(self, state: TurnState, context: _Context, constraint: ToolConstraint | None) -> list[str]:
        """The model's rounds until it answers in words (or a limit, a question for a yes, an
        action told from its results); what the last calls' results say."""
        retries_left = 1
        spoken_results: list[str] = []
        reply, turn_messages, actions = context.reply, context.messages, context.actions
        for round_no in range(self._options.max_tool_rounds + 1):
            if round_no > 0:
                constraint = None
            generation = GenerationRequest(
                messages=[context.system, *state.conversation.messages, *turn_messages], tools=context.tools,
                reasoning=context.reasoning, conversational=context.conversational,
                max_tokens=self._options.max_tokens, temperature=self._options.temperature,
                constraint=constraint,
                # refused at once (busy) if the queue says it cannot be done in time; once a tool
                # ran, the turn goes on, so its reply can say what happened
                deadline=None if state.finished_calls else state.deadline,
                decode_gate=state.request.decode_gate, source=state.request.source,
            )
            raw_text, calls, stop_reason = await generate(self._engine, generation, state, reply, context.allowed)
            if not calls:
                # a reply cut by max_tokens ends on its last whole sentence, not a fragment
                reply.finish(drop_incomplete=stop_reason == "length")
                turn_messages.append(Message("assistant", raw_text if not reply.capped else reply.text))
                break
            if round_no == self._options.max_tool_rounds:
                _LOGGER.info("tool round limit reached in %s", state.conversation.id)
                turn_messages.append(Message("assistant", raw_text))
                break
            if context.question:  # a question reads: an action on a device becomes a look at its state
                calls = [as_reading(c, actions, context.allowed) for c in calls]
            turn_messages.append(Message("assistant", raw_text, tool_calls=calls))
            refused = self._fit.refusal(state, context.text, context.match, calls, context.targets) \
                if self._fit is not None and state.persona.home else None
            if refused is not None:  # none of the round runs: the user is asked
                await run_tools(self._registry, calls, state, turn_messages, context.allowed, refused)
                reply.say(str(refused.data["message"]))
                turn_messages.append(Message("assistant", str(refused.data["message"])))
                return []
            results = await run_tools(self._registry, calls, state, turn_messages, context.allowed)
            if any(r.data.get("dry_run") for r in results):
                break  # a plan: what the calls would do is known, and nothing was done to talk about
            spoken_results = [speech_of(r, state.language, self._entity_name) for r in results]
            confirm = [str(r.data.get("message")) for r in results
                       if r.data.get("error") == CONFIRMATION_REQUIRED]
            if confirm:  # sensitive actions wait for the user's yes: ask (the last question names them all), and do no more
                reply.say(confirm[-1])
                turn_messages.append(Message("assistant", confirm[-1]))
                return []
            if any(not r.ok for r in results):
                if retries_left == 0:
                    break
                retries_left -= 1
                continue
            if constraint is not None or any(c.name in actions for c in calls):
                # what was done is told from the results, not in the model's words
                turn_messages.append(Message("assistant", " ".join(spoken_results)))
                break
        return spoken_results

    def _narrowed(self, state: TurnState, text: str, match: Match, constraint: ToolConstraint,
                  targets: Sequence[Entity] | None) -> ToolConstraint | TurnResult:
        """A grammar-bound command acts only on what it names well (never on a neighbour that
        shares a word): the constraint offering only those, or the turn's answer when the name
        fits nothing ("I couldn't find …") or several devices ("Which one …?", as model control
        off says when the words say no action: "I didn't understand …"). A device the user
        chose (`targets`) is acted on: the model is offered its actions, not words or other tools."""
        chosen = targets is not None
        if not chosen and self._home is not None:
            fit = self._home.fit(text, state.language, match)
            if fit.missing:
                return not_found(state, text, fit.missing)
            if fit.ambiguous:  # "which one?" only where the words say what to do: else a stand-in would invent it
                said = any(self._reading.said_intents(text, state.language, e.domain) for e in fit.entities)
                return self._choices.ask_which(state, text, fit.entities) if said else not_understood(
                    state, text, self._example_name(match))
            targets = fit.entities
        if not targets:
            return constraint
        entity_ids = tuple(e.entity_id for e in targets)
        if chosen:  # its actions only (a fan is not offered set_light, nor a broadcast), the way the words say
            actions = self._registry.device_actions({e.domain for e in targets})
            names = tuple(n for n in constraint.tool_names if n in actions and self._registry.specs([n])[0].entity_args)
            way = self._switch_said(text, state.language, targets)
            return ToolConstraint(tuple(n for n in names if n == way) or names, entity_ids)
        return dataclasses.replace(constraint, entity_ids=entity_ids)

    def _switch_said(self, text: str, language: str, targets: Sequence[Entity]) -> str | None:
        """turn_on or turn_off when the request's words say only that way for the devices."""
        said = {intent for e in targets for intent in self._reading.said_intents(text, language, e.domain)}
        ways = [tool for intent, tool in (("HassTurnOn", "turn_on"), ("HassTurnOff", "turn_off")) if intent in said]
        return ways[0] if len(ways) == 1 else None

    def _example_name(self, match: Match) -> str | None:
        """A device to say an example command with (`device_text.example_name`)."""
        return example_name(match.best, self._home.entities()) if self._home is not None else None

    def _modes(self, persona: Persona, request: TurnRequest | None) -> tuple[bool, Reasoning]:
        """Conversational mode and reasoning: the request's, else the persona's, else the settings'."""
        asked = request.conversational if request is not None else None
        conversational = next(v for v in (asked, persona.conversational, self._settings.conversational_mode)
                              if v is not None)
        reasoning = (request.reasoning if request is not None else None) or persona.reasoning or self._settings.reasoning
        return conversational, reasoning

    def _offered_tools(self, persona: Persona) -> list[str]:
        """The tools the model is told about: the persona's that could act now (`Tool.offered`),
        without device actions for a stand-in model that may not run the home."""
        actions = self._registry.device_actions() if persona.home and not self.model_acts else frozenset()
        return self._registry.offered([n for n in self._personas().tool_names(persona) if n not in actions])

    def _system_message(self, persona: Persona, conversational: bool) -> Message:
        return prompt.stable_system_message(self._home if persona.home else None, conversational,
                                            persona.instructions)

    def _entity_name(self, entity_id: str) -> str | None:
        return self._home.name_of(entity_id) if self._home is not None else None


def chunk_emitter(state: TurnState) -> Callable[[str], None]:
    """ReplyChunk events for the reply's sentences; the first one sets the turn's first_token_s."""
    def on_chunk(text: str) -> None:
        if not state.timings.first_token_s:
            state.timings.first_token_s = time.monotonic() - state.started
        state.emit(ReplyChunk(text))
    return on_chunk


def first_round_constraint(allowed: Sequence[str], actions: frozenset[str], constrained: bool,
                           persona: Persona, match: Match, question: bool) -> ToolConstraint | None:
    """A small model's (`constrained`) first round on a command calls an `allowed` tool on the
    request's best matches or answers in words (grammar-bound); a persona with tool_choice
    "required" must call one of its tools, whatever the model."""
    if not allowed:
        return None
    names = tuple(allowed)
    if constrained and actions & set(names) and not question and match.candidates:
        return ToolConstraint(names, tuple(e.entity_id for e in match.best), answer=True)
    if persona.tool_choice == "required":
        return ToolConstraint(names, ())
    return None
