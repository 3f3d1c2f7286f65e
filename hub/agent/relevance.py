"""Whether a stand-in's reply answers what was said, in words of its language (`hub.agent.judge`'s
"unrelated", "nonsense" and unread numbers), as users heard them fail:

- "unrelated": the reply shows no sign of answering the request. It must share a word of
  content with it (the same word or its stem: "muzykę", "muzyka"; words said too often to tell
  anything, "what", "your", "today", aside), or be the reply form of the request's kind of
  chit-chat (a greeting to a greeting, "you're welcome" to thanks, "I'm fine" to "how are you?",
  two sentences of a joke to "tell me a joke", of a dragon to "a story about a dragon"). A reply
  that opens with a greeting or a "you're welcome" to anything else ("Bonjour." to a request,
  "Bem-vindo."), or that answers a question with questions alone ("Czy lubisz mamy
  wyrażenie?"), is unrelated too; and so is any reply of the model's own to a remark of no kind
  of chit-chat, neither a question nor words to the assistant ("de wolk zingt onder mijn
  schoen": "Bloem zijn onder mijn schoen."), but what the turn read (what its calls did).
- "nonsense": a word in no word list of the request's language ("Welche Sprake?",
  "Frauzeleidum", `hub.locales.lexicon`), unless the request, the home or the turn's readings
  say it, or it is a name (capitalised within a sentence) English knows.
- a number (of any kind: "1234 Rue de la Mille") that neither the request nor a reading holds is
  invented (`unread_number`).
"""

from __future__ import annotations

import re
from typing import Iterable

from hub.agent.utterances import is_question, polite_request
from hub.locales import UNSPACED_LANGUAGES, normalize_language
from hub.locales.lexicon import has_lexicon, is_common, is_word
from hub.locales.word_tables import first_said, fold, table_words, tokens

_REPLIES = "replies"
_MIN_CONTENT = 3  # letters of a word of content at least
_STEM = 5  # two words sharing their first 5 letters (all of a shorter one's, 4 at least) are one
_SHORTEST_STEM = 4
_WORD = re.compile(r"\w+(?:['-]\w+)*")
_STAMMER_WORDS = 3  # a phrase of up to 3 words said twice in a row (of 5 letters alone, 4 in two, 3 in three)
_THRICE = 3
_VOWELS = frozenset("aeiouéèêàâîïôûœ")
_CLAUSE = re.compile(r"\s*[,;:]\s*")
_CLAUSE_WORDS = 3  # a clause of 3+ words said twice in one sentence ("je suis le plombier, je suis le plombier")
_QUESTION_MARKS = ("?", "？", "؟")
_FREE_WORDS = 4  # a joke, a story or a song of fewer words ("Grazie fori capi.") is none
_DIGITS = re.compile(r"\d+(?:[.,:]\d+)*")
# the request's chit-chat kinds and the words a reply of that kind says (replies/*.yaml)
_SOCIAL = (("asked_greeting", "greeting"), ("asked_thanks", "welcome"), ("asked_goodbye", "goodbye"),
           ("asked_how_are_you", "state_of_being"))


def unrelated(request: str, sentences: list[str], language: str, known: Iterable[str] = ()) -> bool:
    """Whether the reply's sentences (so far) show no sign of answering `request` (`known`: the
    turn's readings and the home's names, which a reply may speak of)."""
    if not sentences or normalize_language(language) in UNSPACED_LANGUAGES:
        return False  # words not told apart by spaces are not compared
    first = tokens(sentences[0])
    said = [w for s in sentences for w in tokens(s)]
    for asked, answered in _SOCIAL:
        if _says(request, asked, language):
            if asked == "asked_how_are_you" and (_starts(sentences[0], "bare", language) or not (
                    _starts(sentences[0], answered, language) or _says(sentences[0], "first_person", language))):
                return True  # "Cette question avec le temps à la date est très bien."
            return not any(_says(s, answered, language) for s in sentences)
    greeting = first_said(sentences[0], table_words(_REPLIES, language, "greeting"))
    if greeting is not None and first[:len(tokens(greeting))] == tokens(greeting):
        return True  # "Bonjour." to a request
    if " ".join(first) in set(table_words(_REPLIES, language, "welcome")) - set(table_words(_REPLIES, language, "bare")):
        return True  # "Bem-vindo." to a request ("Gerne!" may lead to a joke)
    if any(_starts(s, "self_is", language) for s in sentences):
        return True  # "Ich bin der höchsten Berg der Welt.", "Je suis le monde de la musique."
    if _says(request, "asked_nice", language):
        return False  # "You are great." to "tell me something nice"
    kind = first_said(request, table_words(_REPLIES, language, "asked_free"))
    if kind is not None:  # "tell me a joke", "a story about a dragon"
        return not _free_reply(request, kind, sentences, said, language)
    if is_asked(request, language) or speaks_to_assistant(request, language):  # "magst du Musik"
        if all(s.rstrip().rstrip("\"'”»").endswith(("?", "？")) for s in sentences):
            return True  # a question answered with questions alone
        answer = first_said(sentences[0], table_words(_REPLIES, language, "yes_no"))
        if answer is not None and first[:len(tokens(answer))] == tokens(answer):
            return False  # "Sí, ¡me encanta!" to "¿te gusta la música?"
        if _to_you(request, language) and (not _says(sentences[0], "first_person", language) or _yours_said_back(request, said, language)):
            return True  # "Il tuo colore dei sui per favore." to "qual è il tuo colore preferito"
        if _starts_with_key(request, "topics", "yes_no_question", language):
            return True  # no yes or no: "Je suis-moi le musique." to "est-ce que tu aimes la musique"
    elif not any(s.strip() in k for k in known for s in sentences):
        # a remark of no kind of chit-chat ("de wolk zingt onder mijn schoen"): a stand-in's own
        # words answer none ("Bloem zijn onder mijn schoen.", "Il tavolo canta in un'altro lavoro.")
        return True
    content = [w for w in tokens(request) if _is_content(w, language)]
    known_words = {w for text in known for w in tokens(text)}
    return not any(_same_word(a, b) for a in content for b in said) and not any(
        w in known_words and (w.isdigit() or _is_content(w, language)) for w in said)  # what the turn read


def _free_reply(request: str, kind: str, sentences: list[str], said: list[str], language: str) -> bool:
    """Whether a joke, a story or a song answers the request: of the subject the request names
    after its kind ("a story about a dragon"); else two sentences (one alone is a stand-in's
    fragment: "Bloem je een mop.", "Bien sûr, le débat de la rue est toujours à la rue.", or a
    riddle without its answer). One that speaks of its kind is about the request, not one
    ("What's a joke about a joke?", "The story of a dragon is a classic example of …"), but
    for a lead-in ("Here's a joke:"); nor is one that starts of itself ("I'm not sure what to
    say, but …" to "say something funny")."""
    if len(said) < _FREE_WORDS:
        return False
    kind_words = tokens(kind)
    told = [s for s in sentences if not _leads_in(s, language)]
    if any(_same_word(k, w) for s in told for w in tokens(s) for k in kind_words):
        return False
    if told and _starts(told[0], "first_person", language):
        return False  # of itself, not a joke or a song: "I'm sorry for any confusion. I'm here to help …"
    asked = tokens(request)
    after = next((i + len(kind_words) for i in range(len(asked)) if asked[i:i + len(kind_words)] == kind_words), 0)
    subject = [w for w in asked[after:] if _is_content(w, language)]
    if subject:
        return any(_same_word(a, b) for a in subject for b in said)
    return len(sentences) >= 2


def _yours_said_back(request: str, said: list[str], language: str) -> bool:
    """Whether a reply says the request's words to the assistant back ("I'm not sure what your
    favourite colour is" to "what is your favourite colour"): of the person, not of itself."""
    asked = tokens(request.replace("-", " "))
    yours = set(tokens(" ".join(table_words("topics", language, "about_you"))))
    pairs = {(a, b) for a, b in zip(asked, asked[1:]) if a in yours and _is_content(b, language)}
    return any(pair in pairs for pair in zip(said, said[1:]))


def ends_on_question_mark(text: str) -> bool:
    return text.rstrip(" .!")[-1:] in _QUESTION_MARKS


def is_asked(text: str, language: str) -> bool:
    """Whether `text` asks something: a question mark, or a question's words ("qual è …")."""
    return ends_on_question_mark(text) or is_question(text, language) \
        or any(tokens(text)[:len(tokens(w))] == tokens(w) for w in table_words("topics", language, "question"))


def is_chit_chat(text: str, language: str) -> bool:
    """Whether `text` is chit-chat (a joke, "how are you?", "magst du Musik", a question), not a
    command."""
    return asks_chit_chat(text, language) or speaks_to_assistant(text, language) or is_asked(text, language)


def _leads_in(sentence: str, language: str) -> bool:
    """Whether a sentence announces what comes ("Sure, here's a joke about cats:")."""
    return first_said(sentence, table_words(_REPLIES, language, "lead_in")) is not None


def asks_chit_chat(request: str, language: str) -> bool:
    """Whether a request asks for chit-chat of a kind a reply is judged by: a greeting, thanks,
    goodbye, "how are you?", a joke, a story, a song, "something nice"."""
    keys = [asked for asked, _ in _SOCIAL] + ["asked_free", "asked_nice"]
    return any(_says(request.replace("-", " "), key, language) for key in keys)


def speaks_to_assistant(request: str, language: str) -> bool:
    """Whether a request speaks to the assistant of itself ("do you like music", "magst du
    Musik"), not a polite command ("can you turn on the dishwasher")."""
    return _to_you(request, language) and not polite_request(request, language)


def _to_you(text: str, language: str) -> bool:
    """Whether `text` says a word for the assistant ("you", "du"; "vas-tu": its own word)."""
    return first_said(text.replace("-", " "), table_words("topics", language, "about_you")) is not None


def unknown_word(text: str, language: str, allowed: Iterable[str] = ()) -> str | None:
    """The first word of `text` in no word list of `language`'s (nor `allowed`, folded words),
    or None (also where the language has no list, or no spaces between words)."""
    if normalize_language(language) in UNSPACED_LANGUAGES or not has_lexicon(language):
        return None
    allowed = set(allowed)
    for position, match in enumerate(_WORD.finditer(text)):
        raw = match.group()
        word = fold(raw)
        if len(word) < 2 or any(ch.isdigit() for ch in word) or word in allowed or is_word(word, language):
            continue
        if position > 0 and raw[:1].isupper() and is_word(word, "en"):
            continue  # a name: "Canberra", "Shakespeare"
        return raw
    return None


def nonsense(sentence: str, language: str, request: str, known: Iterable[str] = ()) -> str | None:
    """The first word of `sentence` that is no word of `language`'s, or None."""
    if normalize_language(language) in UNSPACED_LANGUAGES or not has_lexicon(language):
        return None
    allowed = {w for text in (request, *known) for w in tokens(text)}
    letters = [ch for ch in sentence if ch.isalpha()]
    if letters and letters[0].islower() and letters[0].upper() != letters[0]:
        return sentence.split()[0]  # a fragment: "una capitale dell'Australia."
    stammered = said_again(tokens(sentence)) or _unelided(sentence, language)
    if stammered is not None:
        return stammered
    return unknown_word(sentence, language, allowed)


def said_again(words: list[str]) -> str | None:
    """Words said twice in a row ("toujours toujours", "der Himmel, der Himmel"), or None."""
    for size in range(1, _STAMMER_WORDS + 1):
        for i in range(len(words) - 2 * size + 1):
            phrase = words[i:i + size]
            if phrase == words[i + size:i + 2 * size] and max(map(len, phrase)) >= _STEM - size:
                return " ".join(phrase)
    return None


def _unelided(sentence: str, language: str) -> str | None:
    """A word that drops its vowel before another's (French "la histoire" for "l'histoire"), or None."""
    elided = table_words(_REPLIES, language, "elided", with_english=False)
    if not elided:
        return None
    before = table_words(_REPLIES, language, "elided_before", with_english=False)
    words = tokens(sentence)
    for word, following in zip(words, words[1:]):
        if word in elided and (following[:1] in _VOWELS or any(following.startswith(w) for w in before)):
            return f"{word} {following}"
    return None


def repeated_clause(sentence: str) -> bool:
    """Whether a clause of the sentence is said twice in it, or a word of 4 letters or more
    three times ("La bonne bête est une bête de la bonne bête.")."""
    said = [w for w in tokens(sentence) if len(w) >= _SHORTEST_STEM]
    if any(said.count(w) >= _THRICE for w in set(said)):
        return True
    clauses = [" ".join(tokens(c)) for c in _CLAUSE.split(sentence)]
    clauses = [c for c in clauses if len(c.split()) >= _CLAUSE_WORDS]
    return len(set(clauses)) < len(clauses)


def unread_number(sentence: str, request: str, read: str) -> str | None:
    """A number the sentence says that neither the request nor the turn's readings hold."""
    held: set[str] = {*_DIGITS.findall(request), *_DIGITS.findall(read)}
    held |= {part for number in held for part in re.split(r"[.,:]", number)}
    said: list[str] = _DIGITS.findall(sentence)
    for number in said:
        if number not in held and not set(re.split(r"[.,:]", number)) <= held:
            return number
    return None


def _starts(sentence: str, key: str, language: str) -> bool:
    return _starts_with_key(sentence, _REPLIES, key, language)


def _starts_with_key(text: str, table: str, key: str, language: str) -> bool:
    """Whether `text` starts with one of the words of `table`'s `key`."""
    said = tokens(text)
    return any(said[:len(tokens(w))] == tokens(w) for w in table_words(table, language, key))


def _says(text: str, key: str, language: str) -> bool:
    return first_said(text, table_words(_REPLIES, language, key)) is not None


def _is_content(word: str, language: str) -> bool:
    if len(word) < _MIN_CONTENT or word.isdigit():
        return False
    return not is_common(word, language)


def _same_word(a: str, b: str) -> bool:
    """The same word, or two forms of it ("dragon", "dragons"; "muzykę", "muzyka")."""
    if a == b:
        return True
    shorter = min(len(a), len(b))
    if shorter < _SHORTEST_STEM:
        return False
    stem = min(_STEM, shorter)
    return a[:stem] == b[:stem]
