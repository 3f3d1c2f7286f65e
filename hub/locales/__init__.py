"""The hub's own spoken phrases in 35 languages.

Phrases live in `phrases/<language>.yaml`, one flat mapping of key to text per language, and in
`phrases/<feature>/<language>.yaml` for a feature's own phrases; loaded on first use and cached.
English is the reference: it defines the keys and their `{placeholders}`, and any phrase a
language lacks comes from English.

Conventions for callers:
- Placeholder values are data. They are inserted literally (braces in a value stay braces) and
  are never interpreted as format fields, attributes or indexes.
- `value` in `action.set_*` is the spoken quantity, ideally already carrying its unit
  (`phrase(lang, "unit.percent", value=format_number(40, lang))`); the phrases read well without a
  unit too.
- `state` in `state.is` / `action.reported` is one of the `state.*` phrases of the same language
  (predicates: "X is on"), or a spoken quantity; in `state.label` it is a label (a `status.*`
  phrase or Home Assistant's word, often a verb: "X: cleaning"), as in `answer.which_none_label`.
- `action` in `policy.confirm` is one of the language's `policy.verb.*` phrases: the verb form that
  fits its question (an infinitive in most languages, "解錠して" in Japanese).
- Counted words (`unit.hour`, `unit.minute`, `unit.second`) come through `plural_phrase`: a file
  carries `<key>.one` and `<key>.other`, plus `.zero`/`.two`/`.few`/`.many` where the language's
  plural rule (`plural_category`) uses them; a form the file lacks is its `.other`.
- `options` in `entity.ambiguous` and `items` lists come from `join_list`.
- `*_words` keys are "|"-separated words and short phrases (`word_list`), not sentences;
  `choice.ordinal_words` lists the positions first to fourth, each as ","-separated words.
"""

from __future__ import annotations

import math
import string
import unicodedata
from functools import lru_cache
from importlib import resources
from typing import Any

import yaml

SUPPORTED_LANGUAGES: tuple[str, ...] = tuple(
    "ar bg ca cs da de el en es fi fr he hi hr hu id it ja ko ms nb nl pl pt ro ru sk sl sr sv "
    "th tr uk vi zh".split()
)
REFERENCE_LANGUAGE = "en"
# Written without spaces between words (Korean: its endings attach to words): word lists are
# matched inside the text, not word by word.
UNSPACED_LANGUAGES = frozenset({"ja", "zh", "th", "ko"})

# Old or alternative primary codes that mean one of the supported languages.
_ALIASES = {"no": "nb", "nn": "nb", "iw": "he", "in": "id"}
# How items before the last one are separated when speaking a list.
_LIST_SEPARATORS = {"ar": "، ", "ja": "、", "zh": "、"}
_FORMATTER = string.Formatter()


class PhraseError(ValueError):
    """A phrase cannot be produced: a required placeholder value is missing."""


def normalize_language(code: str | None, default: str = "en") -> str:
    """The supported language for a code like "de", "de-DE", "de_DE", "nb-NO", "zh-Hans".

    Unknown, empty or malformed codes give `default`. Never raises.
    """
    if not isinstance(code, str):
        return default
    primary = code.strip().replace("_", "-").split("-", 1)[0].lower()
    primary = _ALIASES.get(primary, primary)
    return primary if primary in SUPPORTED_LANGUAGES else default


@lru_cache(maxsize=None)
def _phrases(language: str) -> dict[str, str]:
    """One language's phrases: `phrases/<language>.yaml` and each feature's own file,
    `phrases/<feature>/<language>.yaml` (a key in two files is an error); {} when it has none."""
    folder = resources.files(__name__).joinpath("phrases")
    files = [(f"{language}.yaml", folder.joinpath(f"{language}.yaml"))]
    files += [(f"{feature.name}/{language}.yaml", feature.joinpath(f"{language}.yaml"))
              for feature in sorted(folder.iterdir(), key=lambda f: f.name) if feature.is_dir()]
    found: dict[str, str] = {}
    for name, resource in files:
        if not resource.is_file():
            continue
        source = f"hub/locales/phrases/{name}"
        data = yaml.safe_load(resource.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError(f"{source} must be a mapping of phrase keys to text")
        for key, text in data.items():
            if not isinstance(key, str) or not isinstance(text, str):
                raise ValueError(f"{source}: {key!r} must map to a quoted string, not {type(text).__name__}")
            if key in found:
                raise ValueError(f"{source}: {key!r} is already a phrase of another file")
            found[key] = text
    return found


def own_phrases(language: str) -> tuple[str, ...]:
    """The phrase texts written in `language` itself (none borrowed from English), but its state
    labels (`status.*`): words the hub says, not words requests are made of, they would tilt a
    short command's language ("TV pause": French "en pause", Danish "på pause")."""
    return tuple(text for key, text in _phrases(language).items() if not key.startswith("status."))


def phrase_keys() -> frozenset[str]:
    """Every known phrase key (the keys of the English reference)."""
    return frozenset(_phrases(REFERENCE_LANGUAGE))


def template(language: str, key: str) -> str:
    """The unformatted phrase text; English when the language lacks it.

    Raises KeyError for a key the hub does not know.
    """
    reference = _phrases(REFERENCE_LANGUAGE)
    if key not in reference:
        raise KeyError(f"unknown phrase key {key!r}; known keys are listed in hub/locales/phrases/en.yaml")
    return _phrases(normalize_language(language)).get(key) or reference[key]


def placeholders(text: str) -> set[str]:
    """The `{name}` placeholders in a phrase text."""
    return {field for _, field, _, _ in _FORMATTER.parse(text) if field is not None}


def phrase(language: str | None, key: str, **values: Any) -> str:
    """The phrase `key` in `language`, with `{name}` placeholders filled from `values`.

    Values are inserted as plain text (str() of the value): a value holding braces or
    format syntax stays literal. Extra values are ignored; a missing one raises PhraseError.
    """
    return _fill(key, template(language or REFERENCE_LANGUAGE, key), values)


def plural_category(count: int, language: str | None) -> str:
    """The CLDR plural category of a whole number in the language: "one", "few", "other", ….

    Only whole numbers are counted, so each rule is CLDR's restricted to integers.
    """
    lang = normalize_language(language)
    n = abs(int(count))
    n10, n100 = n % 10, n % 100
    if lang in ("ja", "ko", "zh", "th", "vi", "id", "ms"):
        return "other"
    if lang in ("fr", "hi"):
        return "one" if n in (0, 1) else "other"
    if lang in ("ru", "uk"):
        if n10 == 1 and n100 != 11:
            return "one"
        return "few" if 2 <= n10 <= 4 and not 12 <= n100 <= 14 else "many"
    if lang in ("hr", "sr"):
        if n10 == 1 and n100 != 11:
            return "one"
        return "few" if 2 <= n10 <= 4 and not 12 <= n100 <= 14 else "other"
    if lang == "pl":
        if n == 1:
            return "one"
        return "few" if 2 <= n10 <= 4 and not 12 <= n100 <= 14 else "many"
    if lang in ("cs", "sk"):
        return "one" if n == 1 else "few" if 2 <= n <= 4 else "other"
    if lang == "sl":
        return {1: "one", 2: "two", 3: "few", 4: "few"}.get(n100, "other")
    if lang == "ro":
        return "one" if n == 1 else "few" if n == 0 or 1 <= n100 <= 19 else "other"
    if lang == "he":
        return {1: "one", 2: "two"}.get(n, "other")
    if lang == "ar":
        if n in (0, 1, 2):
            return ("zero", "one", "two")[n]
        return "few" if 3 <= n100 <= 10 else "many" if 11 <= n100 <= 99 else "other"
    return "one" if n == 1 else "other"


def plural_phrase(language: str | None, key: str, count: int, **values: Any) -> str:
    """The form of `key` that `count` takes in the language, e.g. ("pl", "unit.minute", 22) → "22 minuty".

    `{value}` is `count` unless given. The language's `<key>.<category>` is used when its file
    has it, else its `<key>.other`.
    """
    lang = normalize_language(language)
    form = f"{key}.{plural_category(count, lang)}"
    text = _phrases(lang).get(form) or template(lang, f"{key}.other")
    return _fill(form, text, {"value": count, **values})


def _fill(key: str, text: str, values: dict[str, Any]) -> str:
    parts: list[str] = []
    for literal, field, _spec, _conversion in _FORMATTER.parse(text):
        parts.append(literal)
        if field is None:
            continue
        if field not in values:
            raise PhraseError(f"phrase {key!r} needs a value for {{{field}}}")
        parts.append(str(values[field]))
    return "".join(parts)


def join_list(items: list[str], language: str | None) -> str:
    """Items as a spoken list: "a, b and c" in the language's words."""
    items = [str(item) for item in items]
    if not items:
        return ""
    if len(items) == 1:
        return items[0]
    lang = normalize_language(language)
    separator = _LIST_SEPARATORS.get(lang, ", ")
    return phrase(lang, "list.and", items=separator.join(items[:-1]), last=items[-1])


def yes_words(language: str | None) -> set[str]:
    """Words and short phrases that confirm a question, lower-cased (casefolded)."""
    words = template(language or REFERENCE_LANGUAGE, "policy.yes_words").split("|")
    return {_fold(word) for word in words if word.strip()}


def no_words(language: str | None) -> set[str]:
    """Words and short phrases that refuse a question, lower-cased (casefolded)."""
    words = template(language or REFERENCE_LANGUAGE, "policy.no_words").split("|")
    return {_fold(word) for word in words if word.strip()}


def word_list(language: str | None, key: str) -> tuple[str, ...]:
    """A "|"-separated phrase (`*_words` keys) as folded words and short phrases, in file order."""
    words = template(language or REFERENCE_LANGUAGE, key).split("|")
    return tuple(dict.fromkeys(_fold(word) for word in words if word.strip()))


def is_yes(text: str, language: str | None) -> bool:
    """Whether a whole reply (punctuation and case ignored) is one of the language's yes words.

    Deliberately strict: "yes but not the door" is not a yes.
    """
    cleaned = "".join(" " if unicodedata.category(ch).startswith("P") else ch for ch in text)
    return _fold(cleaned) in yes_words(language)


def _fold(text: str) -> str:
    """Case, width and spacing folded, so "ＯＫ", "Ok" and " ok " compare equal."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def format_number(value: float, language: str | None, max_decimals: int = 1) -> str:
    """A number as spoken text with the language's decimal separator: 21.5 → "21,5" in German."""
    if not math.isfinite(value):
        return str(value)
    rounded = round(float(value), max_decimals)
    if rounded == int(rounded):
        return str(int(rounded))
    text = f"{rounded:.{max_decimals}f}".rstrip("0")
    return text.replace(".", template(language or REFERENCE_LANGUAGE, "number.decimal_separator"))
