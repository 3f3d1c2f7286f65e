"""Split streamed reply text into sentences as soon as each one is complete.

A sentence ends at a line break (list items, headings), at a CJK full stop (`。！？`), or at
`.`, `!`, `?`, `…` followed by whitespace — unless the `.` ends an abbreviation of the reply's
language ("Dr.", "z. B.", "e.g."), an initial ("J. Smith", "M. Dupont"), a German/Polish
ordinal ("am 3. Mai"), a list number ("1. Kitchen"), or the next word starts in lower case.
Decimals ("21.5"), times ("7:30") and URLs never break: their dots are not followed by space.
"etc." and its kin end a sentence only before a capital letter: in replies they usually close it.

Deciding needs the first character after the space, so a finished sentence comes out with the
first character of the next one (or at `flush()`).

With `first_clause_words`, the text's first sentence may end early at a clause mark (`,` `;` `:`
`،` `؛` followed by space; `，` `、` `；` `：` by themselves) once it has that many words (CJK:
twice as many characters): a voice reply starts speaking while the model is still writing its
first long sentence. Never inside code or JSON, nor at a phrase said again (a loop starting).
Later sentences stay whole, so only the first pause falls on a clause.
"""

from __future__ import annotations

import re

# Lower-case, without the final dot. Shared by all languages: titles and Latin short forms.
_COMMON = {"dr", "prof", "e.g", "i.e", "vs", "cf", "ca", "approx", "st"}
_ABBREVIATIONS: dict[str, set[str]] = {
    "en": {
        "mr", "mrs", "ms", "jr", "sr", "mt", "ave", "rd", "blvd", "dept", "est", "fig", "inc",
        "ltd", "co", "corp", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept",
        "oct", "nov", "dec", "mon", "tue", "wed", "thu", "fri", "sat", "sun", "gen", "gov",
        "capt", "sgt", "lt", "col", "vol", "al", "a.m", "p.m",
    },
    "de": {
        "z.b", "bzw", "vgl", "nr", "str", "hr", "fr", "frl", "ggf", "evtl", "inkl", "exkl",
        "tel", "mio", "mrd", "jh", "jhd", "d.h", "u.a", "o.ä", "s.o", "s.u", "z.t", "u.u",
        "sog", "geb", "abs", "bspw", "allg", "bzgl", "gem", "lt", "zzgl", "mind", "ggü",
        "jan", "feb", "mär", "apr", "aug", "sept", "okt", "nov", "dez", "so", "mo", "di",
        "mi", "do", "sa", "dipl", "ing", "u.v.m", "o.g",
    },
    "fr": {
        "m", "mm", "mme", "mlle", "pr", "ste", "av", "bd", "env", "p.ex", "ex", "vol", "tél",
        "boul", "janv", "févr", "avr", "juil", "sept", "oct", "nov", "déc", "min", "max",
    },
    "es": {
        "sr", "sra", "srta", "dra", "ud", "uds", "p.ej", "ej", "pág", "av", "avda", "cía",
        "lic", "ing", "aprox", "tel", "ene", "feb", "abr", "ago", "sept", "oct", "nov", "dic",
        "dña", "dto", "admón",
    },
    "it": {
        "sig", "sigg", "sig.ra", "sig.na", "dott", "dott.ssa", "ing", "avv", "geom", "rag",
        "arch", "es", "pag", "tel", "gen", "feb", "apr", "giu", "lug", "ago", "sett", "ott",
        "nov", "dic", "cfr", "p.es", "ca",
    },
    "nl": {
        "dhr", "mevr", "mw", "ir", "ing", "mr", "bijv", "bv", "o.a", "m.b.t", "d.w.z", "blz",
        "nr", "tel", "jan", "feb", "mrt", "apr", "aug", "sept", "okt", "nov", "dec", "incl",
        "excl", "evt", "ong", "resp", "m.a.w", "t.a.v",
    },
    "pt": {
        "sr", "sra", "srta", "dra", "profa", "eng", "av", "pág", "p.ex", "ex", "tel", "jan",
        "fev", "abr", "mai", "jun", "jul", "ago", "set", "out", "nov", "dez", "v.ex", "aprox",
        "cia", "ltda",
    },
    "pl": {
        "np", "tzn", "mgr", "inż", "ul", "al", "pl", "nr", "tel", "godz", "ws", "wg", "tj",
        "tys", "mln", "mld", "św", "pkt", "ds", "jw", "m.in", "tzw", "ok", "im", "woj", "pow",
    },
}
# Days and months: abbreviations only when written with a capital ("Sun. 5 May", "So. 3. Mai");
# in lower case they are words ending a sentence ("in the sun.", "Das ist so.").
_CAPITALIZED = {
    "jan", "feb", "mar", "mär", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "okt", "nov", "dec",
    "dez", "mrt", "ene", "abr", "ago", "dic", "gen", "giu", "lug", "sett", "ott", "janv", "févr", "avr",
    "juil", "déc", "fev", "mai", "set", "out", "mon", "tue", "wed", "thu", "fri", "sat", "sun", "so",
    "mo", "di", "mi", "do", "sa",
}
# Before a number only: "No. 5", "Art. 3", "p. 12".
_BEFORE_NUMBER = {"no", "nos", "nr", "núm", "n", "art", "p", "pp", "s", "tel", "fig", "vol", "bd"}
_ORDINAL_DOT_LANGUAGES = {"de", "pl", "da", "nb", "no", "fi", "cs", "sk", "hu", "sl", "hr", "sr", "et", "lv", "lt", "is", "tr"}

_ENDS = "\n.!?…。！？｡؟।"
_CANDIDATE = re.compile(f"[{_ENDS}]")
_CJK_CLAUSE_MARKS = "，、；："  # end a clause by themselves; the others when followed by space
CLAUSE_MARKS = ",;:،؛" + _CJK_CLAUSE_MARKS
_CLAUSE_CANDIDATE = re.compile(f"[{_ENDS}{CLAUSE_MARKS}]")
_CLAUSE_PART = re.compile(f"[{CLAUSE_MARKS}]")
_CODE_CHARS = "{}[]<>|`"
_WESTERN_ENDS = ".!?…؟।"
_CJK_ENDS = "。！？｡"
_CLOSERS = "\"'”’»«)]}」』）】*_`"
_OPENERS = "\"'“‘«»([{「『（【*_`"
_ACRONYM = re.compile(r"(?:[^\W\d_]{1,3}\.){1,6}[^\W\d_]{1,3}")
_LOOKBEHIND = 40  # longer than any token a rule can match
_LIST_MARKER = re.compile(r"(?:\d{1,3}|[ivxlcIVXLC]{1,5}|[A-Za-z])")


def _prose_clause(clause: str) -> bool:
    """Whether a clause may be spoken alone: not code or JSON (which the reply filter must see
    whole), and not a phrase said again ("Le Grand Garou, le Grand Garou,": a loop starting)."""
    if any(char in _CODE_CHARS for char in clause):
        return False
    *earlier, last = (" ".join(part.casefold().split()) for part in _CLAUSE_PART.split(clause))
    return last not in earlier


def clause_mark(piece: str) -> str:
    """The clause mark `piece` ends with (closing quotes aside), or ""."""
    last = piece.rstrip(_CLOSERS)[-1:]
    return last if last and last in CLAUSE_MARKS else ""


def base_language(language: str) -> str:
    """"de-DE" / "pt_BR" → "de" / "pt"."""
    return re.split(r"[-_]", language.strip().lower(), maxsplit=1)[0] or "en"


class SentenceSplitter:
    """`feed(text)` returns the sentences completed so far; `flush()` returns the rest."""

    def __init__(self, language: str, first_clause_words: int | None = None) -> None:
        self.language = base_language(language)
        self._clause_words = first_clause_words or 0
        self._clause_open = first_clause_words is not None  # until the first piece is out
        self._abbreviations = _COMMON | _ABBREVIATIONS.get(self.language, set())
        self._ordinal_dot = self.language in _ORDINAL_DOT_LANGUAGES
        self._done: list[str] = []  # scanned start of the current sentence, moved out of the buffer
        self._done_has_words = False
        self._buffer = ""  # the rest of the current sentence and whatever follows it
        self._resume = 0  # index in the buffer where scanning continues
        self._start = 0

    def feed(self, text: str) -> list[str]:
        sentences: list[str] = []
        buffer, pos = self._buffer + text, self._resume
        self._start = 0  # where the current sentence starts in `buffer`
        while True:
            match = (_CLAUSE_CANDIDATE if self._clause_open else _CANDIDATE).search(buffer, pos)
            if match is None:
                pos = len(buffer)
                break
            at = match.start()
            end = self._sentence_end(buffer, at)
            if end is None:  # need more text to decide
                pos = at
                break
            if end < 0:  # not a boundary; continue after the decided part
                pos = -end
                continue
            sentence = self._take(buffer[self._start : end])
            if sentence:
                sentences.append(sentence)
                self._clause_open = False
            self._start = pos = end
        buffer, pos = buffer[self._start :], pos - self._start
        if pos > _LOOKBEHIND:
            # Keep the buffer short (O(n) for long sentences): rules only look back one token,
            # and a token of _LOOKBEHIND characters or more matches no rule.
            scanned = buffer[: pos - _LOOKBEHIND]
            self._done.append(scanned)
            self._done_has_words = self._done_has_words or not scanned.isspace()
            buffer, pos = buffer[pos - _LOOKBEHIND :], _LOOKBEHIND
        self._buffer, self._resume = buffer, pos
        return sentences

    def flush(self) -> list[str]:
        rest = self._take(self._buffer)
        self._buffer, self._resume = "", 0
        return [rest] if rest else []

    def _take(self, tail: str) -> str:
        """The current sentence, ending with `tail`; starts the next one."""
        sentence = ("".join(self._done) + tail).strip()
        self._done, self._done_has_words = [], False
        return sentence

    def _sentence_end(self, buffer: str, at: int) -> int | None:
        """Where the sentence ends if `buffer[at]` ends it; -(resume index) if not; None: wait."""
        char = buffer[at]
        if char == "\n":
            return at + 1
        if char in CLAUSE_MARKS:
            return self._clause_end(buffer, at)
        end = at + 1
        size = len(buffer)
        while end < size and (buffer[end] in _CLOSERS or buffer[end] in _WESTERN_ENDS or buffer[end] in _CJK_ENDS):
            end += 1
        if end == size:
            return None
        if char in _CJK_ENDS:
            return end
        if not buffer[end].isspace():
            return -end  # "21.5", "example.com", "e.g.x"
        following = end
        while following < size and buffer[following].isspace() and buffer[following] != "\n":
            following += 1
        if following == size:
            return None
        if buffer[following] == "\n":
            return end
        run = buffer[at:end]
        if "!" in run or "?" in run or "؟" in run or "।" in run:
            return end
        if self._continues(buffer, at, run, buffer[following]):
            return -following
        return end

    def _clause_end(self, buffer: str, at: int) -> int | None:
        """`_sentence_end` for a clause mark while the first piece may end early."""
        end = at + 1
        while end < len(buffer) and buffer[end] in _CLOSERS:
            end += 1
        if end == len(buffer):
            return None
        clause = "".join(self._done) + buffer[self._start : at]
        if buffer[at] in _CJK_CLAUSE_MARKS:
            long_enough = len(clause.strip()) >= 2 * self._clause_words
        else:
            long_enough = buffer[end].isspace() and len(clause.split()) >= self._clause_words
        return end if long_enough and _prose_clause(clause) else -end

    def _continues(self, buffer: str, at: int, run: str, next_char: str) -> bool:
        """Whether the dot(s) at `at` do not end the sentence, given the next visible character."""
        if next_char.islower():
            return True
        if "…" in run or ".." in run:
            return False
        start = at
        while start > self._start and not buffer[start - 1].isspace():
            start -= 1
            if at - start >= _LOOKBEHIND:
                return False  # a long token ("https://…/path."): no abbreviation
        token = buffer[start:at].lstrip(_OPENERS)
        word = token.lower()
        if word in self._abbreviations and not (word in _CAPITALIZED and token.islower()) \
                or (word in _BEFORE_NUMBER and next_char.isdigit()):
            return True
        if len(token) == 1 and (token.isupper() or token.islower()) and not (token == "I" and self.language == "en"):
            return True  # an initial: "J. Smith", "z. B.", "M. Dupont"
        if _ACRONYM.fullmatch(token):
            return True  # "U.S.", "z.B.", "d.h."
        if _LIST_MARKER.fullmatch(token) and not self._done_has_words and not buffer[self._start : start].strip():
            return True  # "1. Kitchen" at the start of a line
        return self._ordinal_dot and token.isdigit() and len(token) <= 2 and next_char.isalnum()


def first_clause(text: str, language: str, words: int) -> list[str]:
    """`text` as its first clause (of `words` words at least, as `SentenceSplitter` ends one) and
    the rest, which together are `text`; or `text` alone where it has no such clause."""
    pieces = SentenceSplitter(language, first_clause_words=words).feed(text + " ")
    if not pieces or not clause_mark(pieces[0]):
        return [text]
    end = text.find(pieces[0]) + len(pieces[0])
    return [text[:end], text[end:]] if 0 < end < len(text.rstrip()) else [text]
