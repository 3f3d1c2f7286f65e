"""A stand-in's reply for the home, spoken sentence by sentence as the judge passes it.

A stand-in's words are spoken only when they pass the judge (`hub.agent.judge`). Judged whole,
they were spoken only once the model had written all of them: a spoken story's first audio
came after the whole generation. Here, as each sentence completes, the reply made of every
sentence so far is judged, the same judge on that prefix:

- it passes: what waited is spoken at once (speech starts on the first sentence);
- only more words can mend it (a lead-in, "Here's a joke.", is "unfinished" alone): it waits
  for the next sentence, and is dropped if none comes (the model stopped mid-sentence);
- any other fault: the reply ends on what was spoken before it, and the model is halted.

So what was spoken always passed the judge as a whole, and is the whole reply: the turn's
text and its history are `spoken`, or the hub's fallback when nothing was. The first words
released go out as their first clause and the rest (`first_clause`, as a real model's reply
does: `hub.agent.sentences`): speech synthesizes a short clause sooner than a whole sentence.
"""

from __future__ import annotations

import logging
from typing import Callable

_LOGGER = logging.getLogger(__name__)
# faults that more words may take away ("unrelated": the joke's answer, "I'm fine" after "Thanks!")
MENDABLE = frozenset({"unfinished", "empty", "unrelated"})


class JudgedRelease:
    """`chunk` takes the model's sentences as the reply builder lets them through, `say` the
    hub's own words; what may be spoken goes to `emit`, and `halt` ends the model's reply."""

    def __init__(self, faults: Callable[[str], list[str]], emit: Callable[[str], None],
                 halt: Callable[[], None], first_clause: Callable[[str], list[str]] = lambda text: [text]) -> None:
        self._faults = faults  # the judge's, of a reply
        self._emit = emit
        self._halt = halt
        self._first_clause = first_clause  # the first words released, as the pieces they are spoken in
        self._waiting = ""  # the model's words after `spoken`, not passed yet
        self.spoken = ""  # every chunk emitted, in order
        self.ended = False  # a fault no more words mend: nothing more of the model's is spoken
        self.faults: list[str] = []  # why words of the model were not spoken

    def chunk(self, text: str) -> None:
        if self.ended:
            return
        waiting = self._waiting + text
        faults = self._faults(self.spoken + waiting)
        if not faults:
            self._waiting = ""
            self._release(waiting)
        elif MENDABLE.issuperset(faults):
            self._waiting = waiting
        else:
            _LOGGER.info("a stand-in's reply ends here (%s): %s", ", ".join(faults), waiting.strip())
            self.ended, self._waiting = True, ""
            self.faults += faults
            self._halt()

    def say(self, text: str) -> None:
        """The hub's words (what its calls did, a question back) are spoken as they are; a
        lead-in of the model's waiting leads to none of them."""
        self._drop_waiting()
        self._release(text)

    def finish(self) -> None:
        """The model is done: what still waits for more words is not spoken."""
        self._drop_waiting()

    def _drop_waiting(self) -> None:
        if self._waiting:
            faults = self._faults(self.spoken + self._waiting)
            _LOGGER.info("a stand-in's words not spoken (%s): %s", ", ".join(faults), self._waiting.strip())
            self.faults += faults
            self._waiting = ""

    def _release(self, text: str) -> None:
        pieces = [text]
        if not self.spoken:
            text = text.lstrip()  # the reply starts here, whatever came before it
            pieces = self._first_clause(text) if text else []
        for piece in pieces:
            self.spoken += piece
            self._emit(piece)
