"""The parts of a sentence of several commands, each read as the command it would be alone.

A part is read in the speaker's room as a whole sentence is (`speaker_room.plan_in_room`): in
the speaker's area, a media command on the room's floor, else as without a room. A part that is
no command alone ("… and the kitchen lights") borrows the words another part has around its
target (`compound.with_shared_words`): its verb, before or after. Any part still no command:
the sentence is not a list of commands.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from hassil.models import UnmatchedTextEntity
from hassil.recognize import RecognizeResult

from hub.understanding.compound import with_shared_words
from hub.understanding.plans import Plan
from hub.understanding.recognition import bare_template
from hub.understanding.speaker_room import Room, plan_in_room, prefer_room

Recognize = Callable[[str, dict[str, Any] | None], list[RecognizeResult]]  # text, intent context → results
Found = tuple[Plan | None, RecognizeResult | None]  # a part's plan and the result it came from


@dataclass(frozen=True)
class PartReader:
    """One language's recognition and planning, as the fast path has them for a sentence."""

    recognize: Recognize  # strict: slot values only
    recognize_unmatched: Recognize  # with a name the resolver reads
    plan_one: Callable[[RecognizeResult], Plan | None]
    plan_unmatched: Callable[[list[RecognizeResult], str], Plan | None]  # results, the text
    read_names: bool  # whether a part may be read with a name the resolver reads
    room: Room

    def plans(self, parts: list[str]) -> list[Plan]:
        """Each part's plan; a part borrows the words around another part's target (its verb,
        before or after) when it needs them; [] when any part is still no command.

        Borrowed words come before reading an unknown name ("… and the kitchen lights" alone
        would read as a bare name).
        """
        found: list[Found] = [(None, None)] * len(parts)
        said = list(parts)  # each part as recognized, with the words it borrowed
        lenders: list[tuple[list[int], list[int]] | None] = [None] * len(parts)
        for _ in range(2):  # a part completed in the first round may lend its verb in the second
            for number, part in enumerate(parts):
                earlier = [i for i in range(number - 1, -1, -1) if found[i][1] is not None]
                later = [i for i in range(number + 1, len(parts)) if found[i][1] is not None]
                if found[number][0] is not None or lenders[number] == (earlier, later):
                    continue  # done, or nothing new to borrow from
                lenders[number] = (earlier, later)
                befores = [_around(said[i], found[i][1])[0] for i in earlier[:1]]
                befores += [" ".join(said[i].split()[:k]) for i in earlier[:1] for k in (2, 1)]
                afters = [_around(said[i], found[i][1])[1] for i in (later + earlier)[:1]]
                if not later and number < len(parts) - 1:  # German: "… und im Büro aus"
                    last = parts[-1].split()
                    afters += [" ".join(last[-k:]) for k in (1, 2) if len(last) > k]
                forms = with_shared_words(part, [b for b in befores if b], [a for a in afters if a])
                # the part alone, strictly; with borrowed words; alone with a name the resolver reads
                tries = [(part, True), *((f, True) for f in forms), *([(part, False)] if self.read_names else [])]
                for text, strict in tries:
                    # "… and the kitchen light": a bare name is a command alone, not after a verb
                    found[number] = self.part(text, strict, bare=not earlier or text is not part)
                    if found[number][0] is not None:
                        said[number] = text
                        break
        plans = [plan and prefer_room(plan, self.room) for plan, _ in found]
        return plans if all(p is not None for p in plans) else []  # type: ignore[return-value]

    def part(self, text: str, strict: bool, bare: bool) -> Found:
        """One part as a command in the room, else on its floor or as without a room; `bare`:
        a template that says nothing but its slots may match. `strict`: no name the resolver reads."""
        chosen: list[RecognizeResult] = []

        def first_plan(results: list[RecognizeResult]) -> Plan | None:
            for result in results:
                plan = None if not bare and bare_template(result) else self.plan_one(result)
                if plan is not None:
                    chosen[:] = [result]
                    return plan
            return None

        def unmatched_plan(results: list[RecognizeResult]) -> Plan | None:
            plan = self.plan_unmatched(results, text)
            chosen[:] = results[:1] if plan is not None else []
            return plan

        _, plan = plan_in_room(lambda context: self.recognize(text, context), first_plan, self.room)
        if plan is None and not strict:
            _, plan = plan_in_room(lambda context: self.recognize_unmatched(text, context), unmatched_plan,
                                   self.room)
        return plan, chosen[0] if plan is not None and chosen else None


def _around(text: str, result: RecognizeResult | None) -> tuple[str, str]:
    """The words of `text` before and after its target (name, area or floor), for a shared verb."""
    if result is None:
        return "", ""
    said = [str(result.entities[key].text) for key in ("name", "area", "floor") if key in result.entities]
    unmatched_name = result.unmatched_entities.get("name")
    if not said and isinstance(unmatched_name, UnmatchedTextEntity):
        said = [str(unmatched_name.text)]
    folded = text.casefold()
    spans = [(folded.find(t.strip().casefold()), len(t.strip())) for t in said if t.strip()]
    spans = [(start, length) for start, length in spans if start >= 0]
    if not spans:
        return "", ""
    start = min(s for s, _ in spans)
    end = max(s + n for s, n in spans)
    return text[:start].strip(), text[end:].strip(" .!?")
