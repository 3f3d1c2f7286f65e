"""Turns the model's streamed text into speakable sentences, within the reply length cap."""

from __future__ import annotations

from typing import Callable

from hub.agent.speakable import SpeakableStream

# The first chunk may end at a clause mark after this many words: a spoken reply starts before
# the model has written all of a long first sentence ("Once upon a time, …").
FIRST_CLAUSE_WORDS = 4


class ReplyBuilder:
    """Feed raw model text; each complete speakable sentence goes to `on_chunk` at once (the
    first one at its first clause when it has one after `FIRST_CLAUSE_WORDS` words).

    Once the next sentence would pass `max_chars`, or a sentence comes again (a loop), the reply
    is `capped` and the caller should stop generating: the reply always ends on a sentence
    boundary. A sentence `keep` refuses is not spoken (`dropped` lists it).
    """

    def __init__(self, language: str, max_chars: int, on_chunk: Callable[[str], None],
                 keep: Callable[[str], bool] = lambda sentence: True) -> None:
        self._stream = SpeakableStream(language, max_chars=max_chars, first_clause_words=FIRST_CLAUSE_WORDS)
        self._on_chunk = on_chunk
        self._keep = keep
        self._sentences: list[str] = []
        self._seen: set[str] = set()
        self._looped = False
        self.dropped: list[str] = []

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

    def say(self, text: str) -> None:
        """Add the hub's own words (already speakable), whatever the model did before."""
        if text:
            before = self.text
            self._sentences.append(text)
            self._on_chunk(self.text[len(before):])

    def stop(self) -> None:
        """End the reply now (the model loops): its unfinished sentence is not spoken."""
        self._looped = True

    def _emit(self, sentences: list[str]) -> None:
        for sentence in sentences:
            if self._looped:
                return
            key = " ".join(sentence.casefold().split())
            if key in self._seen:
                self._looped = True
                return
            self._seen.add(key)
            if not self._keep(sentence):
                self.dropped.append(sentence)
                continue
            before = self.text
            self._sentences.append(sentence)
            self._on_chunk(self.text[len(before):])
