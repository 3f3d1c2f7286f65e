"""Turns the model's streamed text into speakable sentences, within the reply length cap."""

from __future__ import annotations

from typing import Callable

from hub.agent.sentences import SentenceSplitter
from hub.agent.speakable import make_speakable


class ReplyBuilder:
    """Feed raw model text; complete sentences are made speakable and passed to `on_chunk`.

    Once the next sentence would pass `max_chars`, the reply is `capped` and the caller should
    stop generating: the reply always ends on a sentence boundary.
    """

    def __init__(self, language: str, max_chars: int, on_chunk: Callable[[str], None]) -> None:
        self._language = language
        self._max_chars = max_chars
        self._on_chunk = on_chunk
        self._splitter = SentenceSplitter(language)
        self._sentences: list[str] = []
        self.capped = False

    @property
    def text(self) -> str:
        return " ".join(self._sentences)

    def add_text(self, text: str) -> None:
        if not self.capped:
            for sentence in self._splitter.feed(text):
                self._add_sentence(sentence)

    def finish(self) -> None:
        if not self.capped:
            for sentence in self._splitter.flush():
                self._add_sentence(sentence)
        self._splitter = SentenceSplitter(self._language)

    def _add_sentence(self, sentence: str) -> None:
        if self.capped:
            return
        used = len(self.text)
        room = self._max_chars - used - (1 if used else 0)
        spoken = make_speakable(sentence, self._language)
        if not spoken:
            return
        if len(spoken) > room:
            self.capped = True
            if self._sentences:
                return
            spoken = make_speakable(sentence, self._language, max_chars=self._max_chars)
        self._sentences.append(spoken)
        self._on_chunk(spoken if used == 0 else " " + spoken)
