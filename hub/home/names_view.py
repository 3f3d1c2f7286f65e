"""Every name the hub accepts for each entity, area and floor, and where it came from: the
home's (Home Assistant's or MQTT's names and aliases), the user's (`hub.home.name_book`), the
spoken variants the fast path generates (`hub.home.spoken_names`) and, for areas, the room's
word in the hub's languages. What the Names page and `GET /api/names` show."""

from __future__ import annotations

from dataclasses import dataclass, field

from hub.home.entities import Entity, EntityStore
from hub.home.name_book import NameBook
from hub.home.name_file import Kind
from hub.home.normalize import fold
from hub.home.spoken_names import name_variants
from hub.home.vocabulary import area_translations
from hub.locales import SUPPORTED_LANGUAGES

# Where a name came from.
HOME, HOME_ALIAS, ADDED, GENERATED, TRANSLATION = "home", "home_alias", "added", "generated", "translation"


@dataclass(frozen=True)
class NameEntry:
    name: str
    origin: str  # home | home_alias | added | generated | translation
    source: str | None = None  # generated: the name it comes from; translation: its languages
    removable: bool = False


@dataclass
class TargetNames:
    """One entity, area or floor, and the names it answers to."""

    kind: Kind
    target: str  # entity id, area or floor
    name: str  # what the hub calls it
    names: list[NameEntry]
    removed: list[str]  # the home's names taken away
    targeted: bool = True
    area: str | None = None
    domain: str | None = None
    areas: list[str] = field(default_factory=list)  # a floor's


@dataclass
class NamesListing:
    entities: list[TargetNames]
    areas: list[TargetNames]
    floors: list[TargetNames]
    untargeted: list[str]


def names_listing(store: EntityStore, book: NameBook) -> NamesListing:
    untargeted = set(book.untargeted())
    area_keys = _area_keys(store)
    entities = [_entity_names(e, book, area_keys, e.entity_id not in untargeted) for e in store.all_known()]
    areas = sorted({e.area for e in store.all_known() if e.area} | set(store.own_area_aliases()))
    floors = store.own_floors()
    return NamesListing(
        entities, [_place_names("area", area, book) for area in areas],
        [_place_names("floor", floor, book, list(info.areas)) for floor, info in sorted(floors.items())],
        sorted(untargeted))


def _entity_names(known: Entity, book: NameBook, area_keys: frozenset[str], targeted: bool) -> TargetNames:
    own, home = book.names("entity", known.entity_id)
    entries = [NameEntry(n, HOME if fold(n) == fold(known.name) else HOME_ALIAS if any(
        fold(n) == fold(h) for h in home) else ADDED, removable=len(own) > 1) for n in own]
    seen = {n.casefold() for n in own}
    for written in own:
        for variant in name_variants(written, area_keys):
            if variant.casefold() not in seen:
                seen.add(variant.casefold())
                entries.append(NameEntry(variant, GENERATED, written))
    return TargetNames("entity", known.entity_id, own[0], entries, book.removed("entity", known.entity_id),
                       targeted, known.area, known.domain)


def _place_names(kind: Kind, target: str, book: NameBook, areas: list[str] | None = None) -> TargetNames:
    own, home = book.names(kind, target)
    entries = [NameEntry(n, HOME if n == target else HOME_ALIAS if any(fold(n) == fold(h) for h in home)
                         else ADDED, removable=n != target) for n in own]
    if kind == "area":
        languages: dict[str, list[str]] = {}
        for code in SUPPORTED_LANGUAGES:
            for word in area_translations(tuple(own), code):
                languages.setdefault(word, []).append(code)
        known = {fold(n) for n in own}
        entries += [NameEntry(word, TRANSLATION, " ".join(dict.fromkeys(codes))) for word, codes in
                    sorted(languages.items()) if fold(word) not in known]
    return TargetNames(kind, target, target, entries, book.removed(kind, target), areas=areas or [])


def _area_keys(store: EntityStore) -> frozenset[str]:
    """The folded names of every area in every language: a variant that is only an area's name
    is no name of a device (as the fast path builds its names)."""
    aliases = store.area_aliases()
    areas = {e.area for e in store.all_known() if e.area} | set(aliases)
    texts = {text for area in areas for text in (area, *aliases.get(area, ()))}
    texts |= {word for code in SUPPORTED_LANGUAGES for area in areas
              for word in area_translations((area, *aliases.get(area, ())), code)}
    return frozenset(fold(text) for text in texts)
