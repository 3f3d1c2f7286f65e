"""Turns the model's streamed text into speakable sentences, within the reply length cap."""

from __future__ import annotations

import re
from typing import Callable

from hub.agent.sentences import clause_mark
from hub.agent.speakable import SpeakableStream

# The first chunk may end at a clause mark after this many words: a spoken reply starts before
# the model has written all of a long first sentence ("Once upon a time, …").
FIRST_CLAUSE_WORDS = 4
_WORD = re.compile(r"\w+")
_LOOP_WORDS = 4  # a sentence this long that repeats words said before in a row is a loop
_COLONS = (":", "：")  # what a lead-in ends with ("The answer is:")


def loop_key(sentence: str) -> str:
    """What two sentences of a loop have in common: their words, single letters and numbers
    aside ("B: A: A joke." and "C: A: A joke." are one sentence said again)."""
    said = _WORD.findall(sentence.casefold())
    kept = [w for w in said if len(w) > 1 and not w.isdigit()]
    return " ".join(kept or said)


class ReplyBuilder:
    """Feed raw model text; each complete speakable sentence goes to `on_chunk` at once (the
    first one at its first clause when it has one after `FIRST_CLAUSE_WORDS` words).

    Once the next sentence would pass `max_chars`, or a sentence comes again (a loop, by
    `loop_key`), the reply is `capped` and the caller should stop generating: the reply always
    ends on a sentence boundary. A sentence for which `withhold` gives a reason is not spoken
    (`withheld` lists it with its reason). A lead-in (a piece ending in a colon: "The answer
    is:") is spoken only with the sentence it leads to, so a reply never ends on one, nor on one
    before withheld words ("unfinished").
    Without `early_clause` the first sentence, too, is spoken whole (a stand-in's often ends
    in words that are withheld, and its first clause alone would be all the user hears).
    A sentence withheld for one of `halting` reasons ends the reply there, `capped` (a stand-in
    reciting its prompt goes on reciting it: the rest is not worth generating). The hub's own
    words (`say`) go to `on_said`, when given, instead of `on_chunk`.
    """

    def __init__(self, language: str, max_chars: int, on_chunk: Callable[[str], None],
                 withhold: Callable[[str], str | None] = lambda sentence: None, early_clause: bool = True,
                 halting: frozenset[str] = frozenset(), on_said: Callable[[str], None] | None = None) -> None:
        self._stream = SpeakableStream(language, max_chars=max_chars,
                                       first_clause_words=FIRST_CLAUSE_WORDS if early_clause else None)
        self._on_chunk = on_chunk
        self._on_said = on_said or on_chunk  # the hub's own words (`say`)
        self._withhold = withhold
        self._lead_ins: list[str] = []  # spoken with the next sentence that is
        self._sentences: list[str] = []
        self._seen: set[str] = set()
        self._said = " "  # the loop keys of every sentence so far, in order
        self._looped = False
        self._halting = halting
        self.withheld: list[tuple[str, str]] = []  # (reason, sentence)

    @property
    def dropped(self) -> list[str]:
        return [sentence for _, sentence in self.withheld]

    @property
    def capped(self) -> bool:
        return self._stream.truncated or self._looped

    @property
    def text(self) -> str:
        return self._stream.join(self._sentences)

    def add_text(self, text: str) -> None:
        self._emit(self._stream.feed(text))

    def finish(self, drop_incomplete: bool = False) -> None:
        """Speak what is left; with `drop_incomplete`, drop an unfinished last sentence
        (the model was cut off) unless it would be all there is."""
        rest = self._stream.flush()
        if not (drop_incomplete and self._sentences) and not self._looped:
            self._emit(rest)
        self._drop_lead_ins()

    def say(self, text: str) -> None:
        """Add the hub's own words (already speakable), whatever the model did before."""
        if text:
            before = self.text
            self._sentences.append(text)
            self._on_said(self.text[len(before):])

    def stop(self) -> None:
        """End the reply now (the model loops): its unfinished sentence is not spoken."""
        self._looped = True

    def _emit(self, sentences: list[str]) -> None:
        for sentence in sentences:
            if self._looped:
                return
            key = loop_key(sentence)
            if key in self._seen or (len(key.split()) >= _LOOP_WORDS and f" {key} " in self._said):
                self._looped = True  # said again (also when it first came out as a clause and the rest)
                return
            self._seen.add(key)
            self._said += f"{key} "
            reason = self._withhold(sentence)
            if reason is not None:
                self.withheld.append((reason, sentence))
                self._drop_lead_ins()
                if reason in self._halting:
                    self._looped = True  # ended as a loop is: nothing more of it is spoken
                    return
                continue
            if clause_mark(sentence) in _COLONS:
                self._lead_ins.append(sentence)
                continue
            before = self.text
            self._sentences += [*self._lead_ins, sentence]
            self._lead_ins = []
            self._on_chunk(self.text[len(before):])

    def _drop_lead_ins(self) -> None:
        """The lead-ins held have nothing to lead to (it was withheld, or the reply ended)."""
        self.withheld += [("unfinished", lead_in) for lead_in in self._lead_ins]
        self._lead_ins = []
