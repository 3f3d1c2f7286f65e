"""What the fast path says of what it did: one short sentence for the calls a plan made, the
policy's question last, several commands answered once."""

from __future__ import annotations

from dataclasses import replace

from hub.core.answer import DirectAnswer
from hub.core.speech import CONFIRMATION_REQUIRED, speech_of
from hub.core.tools import ToolResult
from hub.home.entities import Entity
from hub.locales import format_number, join_list, phrase
from hub.understanding.plans import Action

# Failures after which the model may still do better: nothing was done, nothing was refused.
FALL_BACK_CODES = frozenset({"unsupported", "unknown_entity", "invalid_arguments", "unknown_tool"})
_ON_OFF_DOMAINS = ("light", "switch", "fan", "input_boolean", "media_player", "climate")


def asking(outcome: DirectAnswer | None) -> DirectAnswer | None:
    """What was done, then the question for what the policy holds: asked once, last, in the last
    held call's words (they name every call of the request held so far)."""
    if outcome is None:
        return None
    questions = [str(r.data.get("message")) for r in outcome.results if r.data.get("error") == CONFIRMATION_REQUIRED]
    if not questions:
        return outcome
    return replace(outcome, reply=" ".join(p for p in (outcome.reply, questions[-1]) if p))


def joined(outcomes: list[DirectAnswer]) -> DirectAnswer:
    """Several commands, answered once: each part's sentence in order, every call and result."""
    return DirectAnswer(
        reply=" ".join(o.reply for o in outcomes if o.reply),
        intent="+".join(o.intent for o in outcomes),
        calls=[c for o in outcomes for c in o.calls],
        results=[r for o in outcomes for r in o.results],
        candidates=[c for o in outcomes for c in o.candidates],
        slots=[s for o in outcomes for s in o.slots])


def reply_for(plan: Action, results: list[ToolResult], language: str) -> str:
    """One short sentence for what was done, then what failed; nothing for what the policy holds
    (`asking` asks about it)."""
    done = [e for e, r in zip(plan.targets, results) if r.ok]
    held = [r.data.get("error") == CONFIRMATION_REQUIRED for r in results]
    # the tools' own sentences, or (for what they word for the model) that it did not work
    targets: list[Entity | None] = list(plan.targets) or [None]
    failures = [_failure(e, r, language) for e, r, h in zip(targets, results, held) if not r.ok and not h]
    parts: list[str] = []
    if len(results) == 1 and results[0].ok:
        parts.append(speech_of(results[0], language))
    elif done:
        parts.append(_group_sentence(plan, done, language))
    parts += list(dict.fromkeys(f for f in failures if f))
    return " ".join(parts) or ("" if any(held) else phrase(language, "error.generic"))


def _failure(entity: Entity | None, result: ToolResult, language: str) -> str:
    """The tool's own sentence, or (for errors it words for the model) that it did not work."""
    if result.data.get("error") not in FALL_BACK_CODES:
        return str(result.data.get("message", ""))
    if entity is None:
        return phrase(language, "error.generic")
    return phrase(language, "tool.failed", name=entity.name)


def _group_sentence(plan: Action, done: list[Entity], language: str) -> str:
    names = join_list([e.name for e in done], language)
    on_off = all(e.domain in _ON_OFF_DOMAINS for e in done)
    if plan.tool == "turn_on" and on_off:
        return phrase(language, "action.turned_on", name=names)
    if plan.tool == "turn_off" and on_off:
        return phrase(language, "action.turned_off", name=names)
    if plan.tool == "set_light" and "brightness" in plan.args:
        value = phrase(language, "unit.percent", value=format_number(plan.args["brightness"], language))
        return phrase(language, "action.set_brightness", name=names, value=value)
    # a relative change sets each device its own value (`Action.each`): no one value to say
    if plan.tool == "set_temperature" and "temperature" in plan.args:
        value = phrase(language, "unit.degrees",
                       value=format_number(plan.args["temperature"], language))
        return phrase(language, "action.set_temperature", name=names, value=value)
    if plan.tool == "set_position" and "position" in plan.args:
        value = phrase(language, "unit.percent", value=format_number(plan.args["position"], language))
        return phrase(language, "action.set_position", name=names, value=value)
    return phrase(language, "action.done")
