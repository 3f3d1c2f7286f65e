"""The words a language's sentence templates may say, for language identification: read from
the templates' text (hassil's parser takes seconds for 35 languages), each part's optional endings
and alternatives spelled out ("nastavljen[a|o]"), rules and lists followed, a slot no word.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Iterator, Mapping

from home_assistant_intents import get_intents

from hub.understanding.follow_up_templates import spec_of
from hub.understanding.recognition import HANDLED_INTENTS, add_own_sentences, older_intents


def template_words(code: str) -> frozenset[str]:
    """Every word the language's sentence templates for the handled intents may say (both
    releases', the hub's own): their text, expansion rules and lists' values, a word's optional
    endings and alternatives ("nastavljen[a|o]") spelled out; a slot ({name}, a number) says
    no word. Read from the templates' text (hassil's parser takes seconds for 35 languages)."""
    return frozenset().union(_follow_up_words(code), *(words for _, _, words in said_sentences(code)))


def said_sentences(code: str, opposites: Mapping[str, str] | None = None, lists: bool = True,
                   ) -> Iterator[tuple[str, dict[str, Any], frozenset[str]]]:
    """Each sentence template of the handled intents (both releases', the hub's own): its
    intent's name, its block (`slots`, `requires_context`…) and the words it may say. With
    `opposites` (intent → the intent undoing it), only those intents, and a rule or list that
    both of a pair's sentences use ("<in>": "in|on|at") says no word: it says no direction.
    Without `lists`, a list's values say no word either."""
    installed = get_intents(code)
    releases = [data for data in (add_own_sentences(installed, code) if installed else None, older_intents(code))
                if data]
    for data in releases:
        shared = _Said(data.get("expansion_rules", {}), data.get("lists", {}) if lists else {})
        named = HANDLED_INTENTS & data["intents"].keys() & (opposites.keys() if opposites else HANDLED_INTENTS)
        for name in named:
            silent = _used(data, name) & _used(data, opposites[name]) if opposites else frozenset()
            for block in data["intents"][name]["data"]:
                rules, own_lists = block.get("expansion_rules"), block.get("lists") if lists else None
                said = _Said({**shared.rules, **(rules or {})}, {**shared.lists, **(own_lists or {})}, silent) \
                    if rules or own_lists or silent else shared
                for sentence in block["sentences"]:
                    yield name, block, said.words(sentence)


def _used(data: dict[str, Any], intent: str) -> frozenset[str]:
    """The rules and lists an intent's sentences name ("<in>", "{area}")."""
    blocks = data["intents"].get(intent, {}).get("data", ())
    return frozenset(_REFERENCE.findall(" ".join(s for block in blocks for s in block["sentences"])))


def _follow_up_words(code: str) -> frozenset[str]:
    """The words of the hub's follow-up templates ("apágala", "zet hem uit"): short requests
    that are told from them alone."""
    spec = spec_of(code.split("-", 1)[0].lower())
    if spec is None:
        return frozenset()
    amounts = {"amount": {"values": [w for said in (spec.get("amount") or {}).values() for w in said]}}
    said = _Said(dict(spec.get("rules") or {}), amounts)
    return frozenset(word for sentences in spec["sentences"].values() for sentence in sentences
                     for word in said.words(sentence))


_Forms = tuple[frozenset[str], frozenset[str], frozenset[str], frozenset[str]]
_NOTHING: _Forms = (frozenset({""}), frozenset(), frozenset(), frozenset())
_SLOT: _Forms = (frozenset(), frozenset({""}), frozenset({""}), frozenset())  # spaces around, no word
_MOST_FORMS = 64  # spellings kept per part of a template (a word's endings are a handful)
_TOKEN = re.compile(r"<[^<>]+>|\{[^{}]+\}|[()\[\]|;]|[^()\[\]|;<>{}]+")
_REFERENCE = re.compile(r"[<{]([^<>{}:]+)")


class _Said:
    """The words a template may say, part by part: each part's forms are (`alone`: its texts
    if it has no space, `first`: what may come before its first space, `last`: after its last,
    `inner`: the whole words in between); parts in a row join at their edges."""

    def __init__(self, rules: dict[str, str], lists: dict[str, Any], silent: frozenset[str] = frozenset()) -> None:
        self.rules, self.lists = rules, lists
        self._silent = silent  # rules and lists said as no word
        self._known: dict[str, _Forms] = {}  # each rule's and list's, once

    def words(self, template: str) -> frozenset[str]:
        alone, first, last, inner = self._template(template)
        return frozenset(word for word in alone | first | last | inner if word)

    def _template(self, template: str) -> _Forms:
        tokens = _TOKEN.findall(template)
        forms, _ = self._group(tokens, 0)
        return forms

    def _group(self, tokens: list[str], at: int) -> tuple[_Forms, int]:
        """Alternatives ("|", or ";" said in any order) up to the closing bracket or the end."""
        choices, forms = [], _NOTHING
        while at < len(tokens) and tokens[at] not in ")]":
            token = tokens[at]
            if token in "|;":
                choices.append(forms)
                forms, at = _NOTHING, at + 1
                continue
            if token in "([":
                part, at = self._group(tokens, at + 1)
                part = _union((part, _NOTHING)) if token == "[" else part
            elif token[0] in "<{":
                part = self._reference(token)
            else:
                part = _chunk(token)
            forms, at = _joined(forms, part), at + 1  # past the token, or the group's closing bracket
        return (_union((*choices, forms)) if choices else forms), at

    def _reference(self, token: str) -> _Forms:
        if token not in self._known:
            self._known[token] = _SLOT  # while it is read: a rule naming itself
            name = token[1:-1].split(":", 1)[0]
            if name in self._silent:
                return _SLOT
            if token[0] == "<":
                self._known[token] = self._template(self.rules[name]) if name in self.rules else _SLOT
            else:
                values = (self.lists.get(name) or {}).get("values") or ()
                texts = [v["in"] if isinstance(v, dict) else v for v in values]
                self._known[token] = _union(self._template(str(t)) for t in texts) if texts else _SLOT
        return self._known[token]


def _chunk(text: str) -> _Forms:
    parts = text.split(" ")
    if len(parts) == 1:
        return frozenset(parts), frozenset(), frozenset(), frozenset()
    return frozenset(), frozenset(parts[:1]), frozenset(parts[-1:]), frozenset(parts[1:-1])


def _union(all_forms: Iterable[_Forms]) -> _Forms:
    alone, first, last, inner = (frozenset[str]().union(*parts) for parts in zip(*all_forms))
    return _most(alone), _most(first), _most(last), inner


def _joined(left: _Forms, right: _Forms) -> _Forms:
    """The forms of two parts said in a row."""
    if left is _NOTHING:
        return right
    (alone_a, first_a, last_a, inner_a), (alone_b, first_b, last_b, inner_b) = left, right
    return (_most(frozenset(a + b for a in alone_a for b in alone_b)),
            _most(first_a | {a + b for a in alone_a for b in first_b}),
            _most(last_b | {a + b for a in last_a for b in alone_b}),
            inner_a | inner_b | {a + b for a in last_a for b in first_b})


def _most(forms: frozenset[str]) -> frozenset[str]:
    return forms if len(forms) <= _MOST_FORMS else frozenset(sorted(forms)[:_MOST_FORMS])
