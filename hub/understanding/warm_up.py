"""No first-time cost, in little memory: every language answers its first command at once, and
the languages spoken are prepared in full.

Loading a language's templates takes about a second on a small CPU, and the slot lists of a big
home as long after each change (a rename, an exposure): the first German command after a start
took 0.67 s, the next 0.02 s. So the configured language and the languages the home's names are
written in ("Küche", "Stehlampe": German) are prepared in full before the hub says it is ready:
every template built and kept. Every other language follows in the background, compact
(`hub.understanding.compact_templates`: a command builds only the templates it may match; the
35 languages held ~230 MiB in full), each with its number words (`hub.understanding.number_words`).
A language commands are understood in (`Preparable.heard`) is prepared in full once no turn
runs, the `HEARD_KEPT` latest beside the home's; one heard less recently goes back to compact, so
memory stays flat however many languages are spoken. When the home changes, the languages in
full are prepared again in the background once it has settled, so the command after a change
does not pay for it either (the others pay at their next use).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from typing import Callable, Protocol

from hub.home.entities import EntityStore
from hub.home.vocabulary import domain_words, languages_of_names, says_music, stop_words
from hub.locales import SUPPORTED_LANGUAGES, phrase
from hub.memory import give_back
from hub.understanding.action_words import known_words
from hub.understanding.compound import split_parts
from hub.understanding.follow_up_templates import NO_NAMES
from hub.understanding.follow_up_templates import read as read_follow_up
from hub.understanding.number_words import compact_number_words

_LOGGER = logging.getLogger(__name__)
SETTLE_S = 1.0  # a home change is prepared for once the store has not changed for this long
HOME_LANGUAGES = 3  # of the languages the names suggest, the likeliest prepared before ready (a
# shared word — "salon", "living" — suggests some by chance; the others follow in the background)
HEARD_KEPT = 2  # languages heard lately (beyond the home's) kept in full


class Preparable(Protocol):
    async def prepare(self, language: str, full: bool = False) -> bool: ...

    def heard(self) -> list[str]: ...


def home_languages(store: EntityStore, language: str) -> list[str]:
    """`language`, then the languages the home's entity, area and floor names are written in."""
    names = [text for entity in store.all() for text in (entity.name, *entity.aliases)]
    names += [text for area, aliases in store.area_aliases().items() for text in (area, *aliases)]
    names += [text for floor, found in store.floors().items() for text in (floor, *found.aliases)]
    names += [entity.area for entity in store.all() if entity.area]
    return [language, *languages_of_names(names, language)[:HOME_LANGUAGES]]


def _read_words(language: str) -> None:
    """Load what a command in `language` reads besides its templates: its phrases (the reply),
    its filler and device words (names read in part), its word for "and" (several commands),
    its follow-up and relative templates (read before the fast path: 20 ms the first time), the
    words its templates say around a name (a named device's fit: 70-300 ms the first time, a first
    Danish or English command 4-6× the next) and its word for music."""
    phrase(language, "action.done")
    stop_words(language)
    domain_words(language)
    known_words(language)
    says_music("warm up", language)
    split_parts("warm up", language)
    read_follow_up("warm up", language, NO_NAMES, NO_NAMES)


def _settle_heap() -> None:
    """Leave what a language's preparation made out of the garbage collector's full passes.

    The templates built and the slot lists are long-lived objects: full passes over them held
    the interpreter for 0.1-1.1 s (more as languages loaded), collected nothing, and could fall
    on a command (a first command 2× the next). Freezing them makes those passes scan only what
    came since; a frozen object is still freed once nothing refers to it (the templates of a
    language that goes back to compact). The garbage of the preparation goes first, so none of
    it is frozen (hassil's parsed templates refer to themselves: only a full pass frees them),
    and the memory it held back to the system."""
    compact_number_words()  # the follow-ups' (read by the preparation)
    gc.collect()
    gc.freeze()
    give_back()  # what the preparation freed, to the system


class FastPathWarmUp:
    """A component: `start()` prepares the first languages in full and returns; the rest, the
    languages heard and the home's changes are prepared in the background until `stop()`."""

    def __init__(self, fast_path: Preparable, store: EntityStore, language: str,
                 settle_s: float = SETTLE_S, last_turn: Callable[[], float] = lambda: 0.0) -> None:
        self._fast_path = fast_path
        self._store = store
        self._last_turn = last_turn  # when a turn last ran (time.monotonic(); now while one runs)
        self._language = language
        self._settle_s = settle_s
        self.first: list[str] = []  # prepared in full before ready
        self.full: list[str] = []  # prepared in full now: the first, and the latest heard
        self.prepared: list[str] = []  # every language prepared so far, in order
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        started = time.monotonic()
        self.first = home_languages(self._store, self._language)
        for language in self.first:
            await self._prepare(language, full=True)
        _LOGGER.info("fast path ready in %s (%.1f s); the other languages follow in the background",
                     ", ".join(self.first), time.monotonic() - started)
        self._task = asyncio.create_task(self._background(self._store.version), name="fast path warm-up")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def wait_background(self) -> None:
        """Wait until every language is prepared (benches and tests)."""
        while self._task is not None and len(self.prepared) < len(set(SUPPORTED_LANGUAGES) | set(self.first)):
            await asyncio.sleep(0.05)

    async def _prepare(self, language: str, full: bool) -> None:
        try:
            await self._fast_path.prepare(language, full)
            await asyncio.to_thread(_read_words, language)
        except Exception:  # a language that cannot load must not stop the others, nor the hub
            _LOGGER.exception("preparing the fast path for %s failed", language)
        if language not in self.prepared:
            self.prepared.append(language)
        if full and language not in self.full:
            self.full.append(language)
        elif not full and language in self.full:
            self.full.remove(language)
        _settle_heap()

    def _wanted(self) -> list[str]:
        """The languages to keep in full: the first, and the latest heard beside them."""
        heard = [language for language in self._fast_path.heard() if language not in self.first]
        return [*self.first, *heard[-HEARD_KEPT:]] if HEARD_KEPT else list(self.first)

    async def _follow_heard(self) -> None:
        """A language heard of late in full, one heard less recently compact, each once no turn
        runs (a full collection after each, on the event loop, must not fall on a command)."""
        wanted = self._wanted()
        for language in [language for language in self.full if language not in wanted]:
            await self._quiet(self._settle_s / 4)
            await self._prepare(language, full=False)
        for language in [language for language in wanted if language not in self.full]:
            await self._quiet(self._settle_s / 4)
            await self._prepare(language, full=True)

    async def _quiet(self, seconds: float) -> None:
        """Wait `seconds`, and on while the home keeps changing or turns run: a discovery flood
        (retained configs at start) is taken in first, and a command is not slowed by preparing
        another language beside it (the first commands after a start, 2-5× the next before)."""
        version = None
        while version != self._store.version or time.monotonic() - self._last_turn() < seconds:
            version = self._store.version
            await asyncio.sleep(seconds)

    async def _background(self, version: int) -> None:
        for language in SUPPORTED_LANGUAGES:
            if language not in self.prepared:
                await self._follow_heard()
                await self._quiet(self._settle_s / 4)
                await self._prepare(language, full=language in self._wanted())
        while True:
            await asyncio.sleep(self._settle_s)
            compact_number_words()  # any a command made hassil build meanwhile
            await self._follow_heard()
            if self._store.version == version:
                continue
            version = self._store.version  # changed: prepare once it holds still for a while
            await asyncio.sleep(self._settle_s)
            if self._store.version == version:
                for language in list(self.full):
                    await self._prepare(language, full=True)
