"""Turns the model's streamed text into speakable sentences, within the reply length cap."""

from __future__ import annotations

from typing import Callable

from hub.agent.speakable import SpeakableStream


class ReplyBuilder:
    """Feed raw model text; each complete speakable sentence goes to `on_chunk` at once.

    Once the next sentence would pass `max_chars` the reply is `capped` and the caller should
    stop generating: the reply always ends on a sentence boundary.
    """

    def __init__(self, language: str, max_chars: int, on_chunk: Callable[[str], None]) -> None:
        self._stream = SpeakableStream(language, max_chars=max_chars)
        self._on_chunk = on_chunk
        self._sentences: list[str] = []

    @property
    def capped(self) -> bool:
        return self._stream.truncated

    @property
    def text(self) -> str:
        return self._stream.join(self._sentences)

    def add_text(self, text: str) -> None:
        self._emit(self._stream.feed(text))

    def finish(self, drop_incomplete: bool = False) -> None:
        """Speak what is left; with `drop_incomplete`, drop an unfinished last sentence
        (the model was cut off) unless it would be all there is."""
        rest = self._stream.flush()
        if not (drop_incomplete and self._sentences):
            self._emit(rest)

    def _emit(self, sentences: list[str]) -> None:
        for sentence in sentences:
            before = self.text
            self._sentences.append(sentence)
            self._on_chunk(self.text[len(before):])
