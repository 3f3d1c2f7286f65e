"""Make reply text fit for text-to-speech: no markdown, emoji or URLs; units in words.

Streaming use (the agent speaks a reply sentence by sentence while the model writes it):

    stream = SpeakableStream(language, max_chars=config_limit)
    for chunk in reply_chunks:
        for sentence in stream.feed(chunk):
            speak(sentence)
    for sentence in stream.flush():
        speak(sentence)

`SpeakableStream` splits first (`SentenceSplitter`, so markers split across chunks are whole
again) and then cleans each sentence, keeping the little state markdown needs across lines
(code fences, table headers). `make_speakable(text, …)` is exactly the joined output of one
stream fed the whole text, so both paths speak the same words.
"""

from __future__ import annotations

import re

from hub.agent.sentences import SentenceSplitter, clause_mark
from hub.locales import normalize_language, phrase

_FENCE = re.compile(r"(```|~~~)")
_TABLE_SEPARATOR = re.compile(r"\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?")
_RULE = re.compile(r"([-*_])(\s*\1){2,}")
_QUOTE_MARK = re.compile(r"^(>\s*)+")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)(\s+#+)?$")
_LIST_ITEM = re.compile(r"^(?:[-*+•‣◦▪]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?")

_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_AUTOLINK = re.compile(r"<(?:https?://|mailto:)[^>\s]*>")
_URL = re.compile(r"(?:https?://|\bwww\.)[^\s<>()\[\]]*[^\s<>()\[\].,;:!?'\"]")
_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9]*(?:\s[^<>]*)?/?>")
_STRONG = re.compile(r"\*{2,}|_{2,}|~~")
_EMPHASIS_STAR = re.compile(r"(?<!\s)\*|\*(?!\s)")
_EMPHASIS_UNDERSCORE = re.compile(r"(?<![\w])_(?=\S)|(?<=\S)_(?![\w])")
_EMOJI = re.compile(
    "["
    "\U0001F000-\U0001FAFF"  # pictographs, emoticons, transport, flags, supplemental symbols
    "\U00002190-\U000021FF"  # arrows
    "\U00002300-\U000023FF"  # technical symbols (⌚ ⏰ ⏳)
    "\U00002600-\U000027BF"  # miscellaneous symbols and dingbats (☀ ✅ ❤)
    "\U000027F0-\U000027FF\U00002900-\U0000297F"  # supplemental arrows
    "\U00002B00-\U00002BFF"  # ⭐ ⬆
    "\U0000FE00-\U0000FE0F\U0000200D\U000020E3"  # variation selectors, joiner, keycap
    "\U000E0020-\U000E007F"  # tag characters (subdivision flags)
    "]"
)
_QUANTITY = re.compile(
    r"(?P<sign>(?<![0-9A-Za-z_)])[-−])?(?<![0-9A-Za-z_.,])(?P<int>\d+)(?:(?P<sep>[.,])(?P<frac>\d+))?(?![.,]?\d)"
    r"(?P<time>\s*(?:Uhr\b|h\b|[ap]\.?m\b))?"
    r"(?:\s?(?P<unit>°\s?[CF](?![A-Za-z])|℃|℉|°|%|(?i:km/h)|(?i:kwh)(?![A-Za-z])|W(?![A-Za-z])))?"
)
_UNIT_KEYS = {"℃": "unit.celsius", "℉": "unit.fahrenheit", "°": "unit.degrees", "%": "unit.percent"}
_SPACE_BEFORE_PUNCTUATION = re.compile(r"\s+([.,!?;:])")
_COMMA_BEFORE_PUNCTUATION = re.compile(r",+(?=[.,!?;:])")
_TERMINALS = ".!?…。！？｡"
_CLOSERS = "\"'”’»)]」』）"
_NO_SPACE_LANGUAGES = {"ja", "zh"}


class SpeakableStream:
    """Feed reply text; get speakable sentences as soon as each one is complete.

    One stream per reply. With `max_chars`, sentences stop once the next one would not fit
    (`truncated` turns True and later text is ignored: the caller may stop generating); a
    first sentence that alone is too long is cut at its last word boundary that fits and ended
    with a full stop (a single over-long word is cut inside). `join(sentences)` puts spoken
    sentences together the way `make_speakable` does (no spaces between Chinese/Japanese ones).
    `first_clause_words`: the first sentence may come out at a clause (`SentenceSplitter`).
    """

    def __init__(self, language: str, max_chars: int | None = None, first_clause_words: int | None = None) -> None:
        if max_chars is not None and max_chars < 1:
            raise ValueError(f"max_chars must be at least 1, got {max_chars}")
        self.language = normalize_language(language)
        self._splitter = SentenceSplitter(language, first_clause_words)
        self._first_piece = first_clause_words is not None  # may be a clause: keeps its mark
        self._separator = "" if self.language in _NO_SPACE_LANGUAGES else " "
        self._full_stop = "。" if self.language in _NO_SPACE_LANGUAGES else "."
        self._decimal = phrase(self.language, "number.decimal_separator")
        self._remaining = max_chars
        self._spoken_any = False
        self.truncated = False
        self._in_code = False
        self._in_table = False
        self._maybe_header: str | None = None  # a first table row: header if a separator follows

    def feed(self, text: str) -> list[str]:
        if self.truncated:
            return []
        return self._speakable(self._splitter.feed(text))

    def flush(self) -> list[str]:
        raw = self._splitter.flush()
        out = self._speakable(raw)
        if self._maybe_header is not None and not self.truncated:
            out += self._fit([self._table_row(self._maybe_header)])
        self._maybe_header = None
        self._in_code = self._in_table = False
        return out

    def join(self, sentences: list[str]) -> str:
        return self._separator.join(sentences)

    # --- sentences -------------------------------------------------------------------------

    def _speakable(self, raw_sentences: list[str]) -> list[str]:
        cleaned: list[str] = []
        for raw in raw_sentences:
            mark = clause_mark(raw) if self._first_piece else ""
            self._first_piece = False
            for sentence in self._clean(raw, mark):
                if sentence:
                    cleaned.append(sentence)
        return self._fit(cleaned)

    def _clean(self, raw: str, clause_mark: str = "") -> list[str]:
        """One split sentence → zero or more speakable sentences (a held table header may join).
        A first clause (`clause_mark`) is spoken with its mark rather than a full stop."""
        if _FENCE.match(raw):
            if len(_FENCE.findall(raw)) == 1:
                self._in_code = not self._in_code
            return []
        if self._in_code:
            return []
        if raw.startswith("|"):
            return self._table_line(raw)
        out: list[str] = []
        if self._maybe_header is not None:
            out.append(self._table_row(self._maybe_header))
            self._maybe_header = None
        self._in_table = False
        if _RULE.fullmatch(raw):
            return out
        text = _QUOTE_MARK.sub("", raw)
        is_item = False
        heading = _HEADING.match(text)
        if heading:
            text, is_item = heading.group(1), True
        else:
            marker = _LIST_ITEM.match(text)
            if marker:
                text, is_item = text[marker.end() :], True
        text = self._inline(text)
        if not clause_mark:
            out.append(self._finish(text, is_item))
        elif any(char.isalnum() for char in text):
            out.append(text if text.rstrip(_CLOSERS).endswith(clause_mark) else text + clause_mark)
        return out

    def _table_line(self, raw: str) -> list[str]:
        if _TABLE_SEPARATOR.fullmatch(raw):
            self._maybe_header = None
            self._in_table = True
            return []
        if self._in_table:
            return [self._table_row(raw)]
        out = [self._table_row(self._maybe_header)] if self._maybe_header is not None else []
        self._maybe_header = raw
        return out

    def _table_row(self, raw: str) -> str:
        cells = [self._inline(cell) for cell in raw.strip().strip("|").split("|")]
        return self._finish(", ".join(cell for cell in cells if cell), is_item=True)

    def _inline(self, text: str) -> str:
        text = _IMAGE.sub("", text)
        text = _LINK.sub(r"\1", text)
        text = _AUTOLINK.sub("", text)
        text = _URL.sub("", text)
        text = _HTML_TAG.sub(" ", text)
        text = text.replace("`", "")
        text = _STRONG.sub("", text)
        text = _EMPHASIS_STAR.sub("", text)
        text = _EMPHASIS_UNDERSCORE.sub("", text)
        text = _EMOJI.sub("", text)
        text = _QUANTITY.sub(self._quantity, text)
        text = " ".join(text.split())
        text = _SPACE_BEFORE_PUNCTUATION.sub(r"\1", text)
        text = _COMMA_BEFORE_PUNCTUATION.sub("", text)
        return text.strip(" ,;")

    def _quantity(self, match: re.Match[str]) -> str:
        if match.group("time"):
            return match.group()  # "7.30 Uhr": a time, not a decimal
        sign = "-" if match.group("sign") else ""
        value = sign + match.group("int")
        separator, fraction = match.group("sep"), match.group("frac")
        if separator and len(fraction) == 3 and separator != self._decimal:
            value += separator + fraction  # digit grouping ("1,000" in English): leave it
        elif separator:
            value += self._decimal + fraction
        unit = match.group("unit")
        if not unit:
            return value
        unit = unit.replace(" ", "")
        if unit in ("°C", "°F"):
            key = "unit.celsius" if unit == "°C" else "unit.fahrenheit"
        elif unit.lower() == "km/h":
            key = "unit.kmh"
        elif unit.lower() == "kwh":
            key = "unit.kwh"
        elif unit == "W":
            key = "unit.watt"
        else:
            key = _UNIT_KEYS[unit]
        return phrase(self.language, key, value=value)

    def _finish(self, text: str, is_item: bool) -> str:
        """End list items and headings with a full stop; other sentences keep a closing colon."""
        if not any(char.isalnum() for char in text):
            return ""
        core = text.rstrip(_CLOSERS)
        if core.endswith(tuple(_TERMINALS)):
            return text
        if core.endswith((":", ";", ",")) and (is_item or not core.endswith(":")):
            return text[: len(core) - 1] + self._full_stop + text[len(core) :]
        if core.endswith(":"):
            return text
        return text + self._full_stop

    # --- length cap ------------------------------------------------------------------------

    def _fit(self, sentences: list[str]) -> list[str]:
        if self._remaining is None:
            return sentences
        if self.truncated:
            return []
        out: list[str] = []
        for sentence in sentences:
            needed = len(sentence) + (len(self._separator) if self._spoken_any else 0)
            if needed <= self._remaining:
                out.append(sentence)
            elif not self._spoken_any:
                cut = self._cut(sentence, self._remaining)
                if cut:
                    out.append(cut)
                self.truncated = True
            else:
                self.truncated = True
            if self.truncated:
                self._remaining = 0
                break
            self._remaining -= needed
            self._spoken_any = True
        return out

    def _cut(self, sentence: str, limit: int) -> str:
        room = limit - len(self._full_stop)
        head = sentence[: room + 1]
        space = head.rfind(" ")
        head = (head[:space] if space > 0 else sentence[: max(room, 0)]).rstrip(" ,;:-–—")
        return head + self._full_stop if head else ""


def make_speakable(text: str, language: str, max_chars: int | None = None) -> str:
    """Reply text (markdown allowed) → one speakable string in `language`, at most `max_chars`."""
    stream = SpeakableStream(language, max_chars)
    return stream.join(stream.feed(text) + stream.flush())
