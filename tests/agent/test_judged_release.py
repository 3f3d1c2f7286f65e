"""A stand-in's reply released sentence by sentence as the judge passes the reply so far
(`hub.agent.judged_release`), with the hub's judge; the turns through the agent are in
`test_stand_in_limits.py`."""

from __future__ import annotations

import functools

from hub.agent.judge import ReplyJudge
from hub.agent.judged_release import JudgedRelease
from hub.agent.sentences import first_clause


class Released:
    """A release judged for `request`, recording what it emits and whether it halted."""

    def __init__(self, request: str = "tell me a joke") -> None:
        self.emitted: list[str] = []
        self.halted = 0
        self.release = JudgedRelease(ReplyJudge("en", request).faults, self.emitted.append, self._halt)

    def _halt(self) -> None:
        self.halted += 1


def test_each_sentence_that_passes_is_spoken_at_once() -> None:
    """A riddle's question waits for its answer (alone it is no joke: "What's a joke about a
    joke?"); then each sentence that passes is spoken as it comes."""
    released = Released()
    released.release.chunk("Why don't scientists trust atoms?")
    assert released.emitted == []
    released.release.chunk(" Because they make up everything.")
    assert released.emitted == ["Why don't scientists trust atoms? Because they make up everything."]
    released.release.chunk(" Ha ha!")
    assert released.emitted[-1] == " Ha ha!"
    assert released.release.spoken == "Why don't scientists trust atoms? Because they make up everything. Ha ha!"
    assert released.halted == 0 and released.release.faults == []


def test_a_lead_in_waits_for_the_sentence_it_leads_to() -> None:
    released = Released()
    released.release.chunk("Here's a joke.")
    assert released.emitted == [], "unfinished alone"
    released.release.chunk(" Why did the chicken cross the road?")
    assert released.emitted == ["Here's a joke. Why did the chicken cross the road?"]


def test_a_fault_ends_the_reply_on_what_was_spoken_and_halts_the_model() -> None:
    released = Released("tell me a story about a cat")
    for chunk in ("Once upon a time, there was a cat named Tom.", " The user asked for a story.",
                  " Tom liked to sleep in the sun."):
        released.release.chunk(chunk)
    assert released.emitted == ["Once upon a time, there was a cat named Tom."]
    assert released.release.ended and released.halted == 1 and "machinery" in released.release.faults


def test_a_joke_of_one_statement_is_none() -> None:
    """SmolLM2's "Bloem je een mop." to "vertel me een mop": a joke is a riddle or two sentences."""
    released = Released()
    released.release.chunk("The joke is on the big table.")
    released.release.finish()
    assert released.emitted == [] and "unrelated" in released.release.faults


def test_what_waits_at_the_end_is_not_spoken() -> None:
    """The model stopped mid-sentence, or on a lead-in: nothing of it is said."""
    released = Released()
    released.release.chunk("Why don't scientists trust atoms? Because they make up everything.")
    released.release.chunk(" Here's another one:")
    released.release.finish()
    assert released.release.spoken == "Why don't scientists trust atoms? Because they make up everything."
    assert released.release.faults == ["unfinished"]


def test_the_hubs_own_words_are_spoken_as_they_are() -> None:
    """What the calls did, after the model's words (a lead-in of the model's leads to none of them)."""
    released = Released()
    released.release.chunk("Sure.")
    released.release.say(" Turned on the kitchen light.")
    assert released.emitted == ["Turned on the kitchen light."], "the reply starts with them"


def test_the_first_words_go_out_as_their_first_clause_and_the_rest() -> None:
    """Speech starts on a short clause instead of a whole sentence; the reply is the same."""
    emitted: list[str] = []
    release = JudgedRelease(ReplyJudge("en", "tell me a story about a lighthouse keeper").faults, emitted.append,
                            lambda: None, first_clause=functools.partial(first_clause, language="en", words=4))
    release.chunk("Once upon a time, in a town by the sea, there lived a lighthouse keeper named Tom.")
    release.chunk(" He loved the sea.")
    assert emitted == ["Once upon a time,", " in a town by the sea, there lived a lighthouse keeper named Tom.",
                       " He loved the sea."]
    assert release.spoken == "".join(emitted)
