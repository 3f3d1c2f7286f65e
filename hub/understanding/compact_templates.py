"""Sentence templates kept compact until matching reaches them.

hassil parses a template into a tree of a few dozen objects; the 35 languages' handled intents
came to ~200 MiB of them, most for languages a home never speaks. Here a template is kept as
its text, the literal fragments any text it matches must hold (hassil's own prefilter,
`Sentence.get_required_clauses`, computed once) and its tree packed into bytes (`marshal`):
hassil skips every template whose fragments the text lacks before it looks at the tree, so a
command builds the trees of the hundred-odd templates that may match, not of the thousands
that may not. A language prepared in full has every tree built and kept (`pin`).

Packed the same way, a template says the same in both releases of a language (and often in
several languages): one bytes object and one tuple of clauses serve them all (`Shared`).
"""

from __future__ import annotations

import marshal
from functools import lru_cache
from typing import Any, Iterable, Iterator

from hassil.expression import (
    Alternative,
    Expression,
    Group,
    ListReference,
    Permutation,
    RuleReference,
    Sentence,
    Sequence,
    TextChunk,
)
from hassil.intents import Intents

# the packed tree: a str is a TextChunk whose text is its original text; a tuple starts with its kind
_CHUNK, _SEQUENCE, _ALTERNATIVE, _OPTIONAL, _PERMUTATION, _RULE, _LIST = range(7)

RECENT_TREES = 512  # unpinned trees kept built (~3 MiB); equal packed trees are one bytes object
Clauses = tuple[tuple[str, ...], ...]  # every clause's fragments: a text holds one of each clause


def pack(expression: Expression) -> bytes:
    return marshal.dumps(_packed(expression))


def _packed(node: Expression) -> Any:
    if isinstance(node, TextChunk):
        return node.text if node.text == node.original_text else (_CHUNK, node.text, node.original_text)
    if isinstance(node, Group):
        kind = (_PERMUTATION if isinstance(node, Permutation)
                else (_OPTIONAL if node.is_optional else _ALTERNATIVE) if isinstance(node, Alternative)
                else _SEQUENCE)
        return (kind, *(_packed(item) for item in node.items))
    if isinstance(node, RuleReference):
        return (_RULE, node.rule_name)
    if isinstance(node, ListReference):
        return (_LIST, node.list_name, node.slot_name, node.prefix, node.suffix, node.is_end_of_word,
                node.is_capture, node.is_inline_range)
    raise TypeError(f"no packing for {type(node).__name__}")


def unpack(packed: bytes, built: dict[Any, Expression] | None = None) -> Expression:
    """The tree of `packed`; with `built`, a part equal to one built before is that one (the
    trees of a language built together share their "[the]" and "<name>": hassil only reads them)."""
    node = marshal.loads(packed)
    return _node(node, None) if built is None else _built(node, built)


@lru_cache(maxsize=RECENT_TREES)
def recently_unpacked(packed: bytes) -> Expression:
    """The trees matching reached lately, kept: a command in a compact language reaches the same
    hundred-odd templates as the one before, and rebuilding them was a quarter of its time."""
    return unpack(packed)


def _built(node: Any, built: dict[Any, Expression]) -> Expression:
    found = built.get(node)
    if found is None:
        found = built[node] = _node(node, built)
    return found


def _node(node: Any, built: dict[Any, Expression] | None) -> Expression:
    if isinstance(node, str):
        return TextChunk(node)
    kind = node[0]
    if kind == _CHUNK:
        return TextChunk(node[1], node[2])
    if kind == _RULE:
        return RuleReference(node[1])
    if kind == _LIST:
        return _list_reference(*node[1:])
    items = [_node(item, None) if built is None else _built(item, built) for item in node[1:]]
    if kind == _SEQUENCE:
        return Sequence(items)
    if kind == _PERMUTATION:
        return Permutation(items)
    return Alternative(items, is_optional=kind == _OPTIONAL)


def _list_reference(name: str, slot: str, prefix: str | None, suffix: str | None, end_of_word: bool,
                    capture: bool, inline_range: bool) -> ListReference:
    """As hassil parsed it: "{brightness:level}" names the list and the slot apart; an inline
    range ("{1..100:level}") keeps its match of the name."""
    reference = ListReference(f"{name}:{slot}" if inline_range else name, prefix, suffix, end_of_word)
    reference._slot_name = slot
    reference.is_capture = capture
    return reference


class CompiledOnUse(Sentence):
    """A hassil `Sentence` whose tree is built from its packed bytes each time matching reaches
    it (its required clauses let hassil pass it by unbuilt), or kept once pinned."""

    def __init__(self, text: str | None, clauses: Clauses, packed: bytes) -> None:  # noqa: super().__init__ not called: the tree is the point
        self.text = text
        self.pattern = None
        self.required_clauses = clauses  # type: ignore[assignment]  # hassil only iterates them
        self.packed = packed
        self.pinned: Expression | None = None

    @property
    def expression(self) -> Expression:
        return self.pinned if self.pinned is not None else recently_unpacked(self.packed)

    @expression.setter
    def expression(self, tree: Expression) -> None:
        self.pinned = tree

    def pin(self, built: dict[Any, Expression] | None = None) -> None:
        """Build the tree and keep it (`built`: as `unpack`)."""
        if self.pinned is None:
            self.pinned = unpack(self.packed, built)

    def unpin(self) -> None:
        self.pinned = None

    def __reduce__(self) -> tuple[Any, ...]:
        return CompiledOnUse, (self.text, self.required_clauses, self.packed)

    def __repr__(self) -> str:
        return f"CompiledOnUse({self.text!r})"


class Shared:
    """One object for equal packed trees and clauses, whatever template or language they came from."""

    def __init__(self) -> None:
        self._seen: dict[Any, Any] = {}

    def one(self, value: Any) -> Any:
        return self._seen.setdefault(value, value)

    def clauses(self, found: Iterable[Iterable[str]]) -> Clauses:
        clauses: Clauses = self.one(tuple(sorted(self.one(tuple(sorted(clause))) for clause in found)))
        return clauses

    def sentence(self, parsed: Sentence, rules: dict[str, Sentence], clauses: bool = True) -> CompiledOnUse:
        found = self.clauses(parsed.get_required_clauses(rules)) if clauses else ()
        return CompiledOnUse(parsed.text, found, self.one(pack(parsed.expression)))


def compact(intents: Intents, shared: Shared) -> Intents:
    """`intents` (parsed, changed in place) with every sentence and rule compiled on use."""
    rules = intents.expansion_rules
    for block in blocks(intents):
        block_rules = {**rules, **block.expansion_rules}
        # hassil's IntentData.sentences is a cached property: the compiled ones take its place
        block.__dict__["sentences"] = [shared.sentence(s, block_rules) for s in block.sentences]
    for table in (rules, *(block.expansion_rules for block in blocks(intents))):
        for name, rule in table.items():
            table[name] = shared.sentence(rule, rules, clauses=False)
    return intents


def rules(intents: Intents) -> Iterator[CompiledOnUse]:
    """Every compiled rule of `intents` (its own and its blocks')."""
    for table in (intents.expansion_rules, *(block.expansion_rules for block in blocks(intents))):
        yield from (rule for rule in table.values() if isinstance(rule, CompiledOnUse))


def templates(intents: Intents) -> Iterator[CompiledOnUse]:
    """Every compiled sentence template of `intents`."""
    for block in blocks(intents):
        yield from (s for s in block.sentences if isinstance(s, CompiledOnUse))


def blocks(intents: Intents) -> Iterator[Any]:
    """Every block of sentences (hassil's IntentData) of `intents`."""
    for intent in intents.intents.values():
        yield from intent.data
