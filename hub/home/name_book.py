"""The names the user gave entities, areas and floors, the home's names they took away, and the
entities they untargeted: kept in `names.json` in the data folder and laid over the store
(`EntityStore.set_overlay`), so the fast path, the resolver and the model's prompt use them at
once, without a restart.

- An added name is one more alias (an entity keeps its name; with that name removed, its next
  name is the one the hub says). A name another entity answers to is refused: no device takes
  another's name (the policy's questions name a device as its backend does, whatever it is called).
- A home name removed (an entity's name or alias from Home Assistant or MQTT, an area's or a
  floor's alias) is no longer accepted; an entity keeps at least one name, an area and a floor
  their own.
- An untargeted entity is left out of everything the hub understands and does: the fast path,
  the model's prompt and its tools; a direct tool call on it is refused.

Every change is saved first (atomically, hub.state_files); a full or read-only disk changes nothing
and says so. A damaged file is set aside and never makes an untargeted entity actionable again
(hub.home.name_file).
"""

from __future__ import annotations

import copy
import unicodedata
from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping

from hub.home.entities import MAX_ALIASES, MAX_NAME_CHARS, Entity, EntityStore, Floor
from hub.home.name_file import EVERY_ENTITY, Kind, empty_names, names_file
from hub.home.normalize import fold


class NameRefused(ValueError):
    """A change that cannot be made; `code` says why, the message what to do."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class NamesNotSaved(ValueError):
    """The data folder could not be written (a full or read-only disk): nothing was changed."""


def clean_name(name: str) -> str:
    """A name as kept: control and invisible format characters dropped, blanks collapsed;
    NameRefused when nothing is left or it is too long."""
    cleaned = " ".join("".join(ch for ch in name if unicodedata.category(ch) not in ("Cc", "Cf")).split())
    if not cleaned:
        raise NameRefused("invalid_name", "A name needs at least one visible character.")
    if len(cleaned) > MAX_NAME_CHARS:
        raise NameRefused("invalid_name", f"A name has at most {MAX_NAME_CHARS} characters.")
    return cleaned


class NameBook:
    """The user's names (an EntityStore's NameOverlay), persisted in `path`."""

    def __init__(self, path: Path | None, store: EntityStore) -> None:
        self._file = names_file(path, clean_name) if path is not None else None
        self._store = store
        self._data = (self._file.load() if self._file is not None else None) or empty_names()
        self._untargeted = frozenset(self._data["untargeted"])

    # --- what the user changed ------------------------------------------------------------

    def added(self, kind: Kind, target: str) -> list[str]:
        return list(self._data[kind].get(target, {}).get("added", []))

    def removed(self, kind: Kind, target: str) -> list[str]:
        """The home's names taken away, as they were written."""
        return list(self._data[kind].get(target, {}).get("removed", []))

    def untargeted(self) -> list[str]:
        return list(self._data["untargeted"])

    # --- changes --------------------------------------------------------------------------

    def names(self, kind: Kind, target: str) -> tuple[list[str], list[str]]:
        """The target's names now, and those its backend gave it (an area's and a floor's own
        name first); NameRefused (unknown_<kind>) for a target the home does not have."""
        entry = self._data[kind].get(target, {})
        if kind == "entity":
            known = self._store.known(target)
            if known is None:
                raise NameRefused("unknown_entity", f"No entity {target!r}; GET /api/names lists them.")
            home = [known.name, *known.aliases]
            return _merged(tuple(home), entry) or home, home
        own = self._store.own_area_aliases() if kind == "area" else {
            floor: info.aliases for floor, info in self._store.own_floors().items()}
        if target not in own and not (kind == "area" and any(e.area == target for e in self._store.all_known())):
            raise NameRefused(f"unknown_{kind}", f"No {kind} {target!r}; GET /api/names lists them.")
        aliases = own.get(target, ())
        return [target, *_merged(aliases, entry)], [target, *aliases]

    def add(self, kind: Kind, target: str, name: str) -> str:
        """Add `name` to the target (a home name taken away is given back); the name as kept."""
        own, _ = self.names(kind, target)
        name = clean_name(name)
        data = copy.deepcopy(self._data)
        entry = data[kind].setdefault(target, {"added": [], "removed": []})
        taken = [n for n in entry["removed"] if fold(n) == fold(name)]
        if taken:
            entry["removed"] = [n for n in entry["removed"] if n not in taken]
        elif any(fold(n) == fold(name) for n in own):
            raise NameRefused("already_named", f"{target} already answers to {name!r}.")
        elif len(entry["added"]) >= MAX_ALIASES:
            raise NameRefused("too_many_names", f"{target} has {MAX_ALIASES} added names; remove one first.")
        else:
            entry["added"].append(name)
        if kind == "entity":
            self._refuse_namesake(target, name)
        self._save(data)
        return name

    def remove(self, kind: Kind, target: str, name: str) -> None:
        """Take `name` away from the target: an added one is forgotten, a home one remembered as
        taken away."""
        own, home = self.names(kind, target)
        data = copy.deepcopy(self._data)
        entry = data[kind].setdefault(target, {"added": [], "removed": []})
        if not any(fold(n) == fold(name) for n in own):
            raise NameRefused("not_a_name", f"{target} does not answer to {name!r}; GET /api/names lists its names.")
        if kind == "entity" and len(own) <= 1:
            raise NameRefused("last_name", f"{name!r} is the last name of {target}: add another first, "
                                           "or untarget it.")
        if kind != "entity" and fold(name) == fold(target):
            raise NameRefused("own_name", f"{name!r} is the {kind}'s own name; it can lose only other names.")
        entry["added"] = [n for n in entry["added"] if fold(n) != fold(name)]
        written = next((n for n in home if fold(n) == fold(name)), None)
        if written is not None:
            entry["removed"].append(written)
        self._save(data)

    def _refuse_namesake(self, target: str, name: str) -> None:
        """NameRefused (name_taken) when another entity answers to `name`: a name the user gives
        never makes one device answer to another's name (a pump called "Front door", a lock
        called "Kitchen light")."""
        for known in self._store.all_known():
            if known.entity_id == target:
                continue
            entry = self._data["entity"].get(known.entity_id, {})
            names = _merged((known.name, *known.aliases), entry) or [known.name]
            if any(fold(n) == fold(name) for n in names):
                raise NameRefused("name_taken", f"{known.entity_id} ({names[0]}) already answers to {name!r}: "
                                                "a name belongs to one device; choose another.")

    def set_untargeted(self, entity_ids: list[str]) -> None:
        """Untarget exactly these entities; one the home does not have may only stay untargeted."""
        unknown = [i for i in entity_ids if self._store.known(i) is None and i not in self._untargeted]
        if unknown:
            raise NameRefused("unknown_entity", f"No entity {unknown[0]!r}; GET /api/names lists them.")
        data = copy.deepcopy(self._data)
        data["untargeted"] = sorted(dict.fromkeys(entity_ids))
        self._save(data)

    # --- the overlay (hub.home.entities.NameOverlay) --------------------------------------

    def entity(self, entity: Entity) -> Entity | None:
        if entity.entity_id in self._untargeted or EVERY_ENTITY in self._untargeted:
            return None
        entry = self._data["entity"].get(entity.entity_id)
        if not entry:
            return entity
        names = _merged((entity.name, *entity.aliases), entry)
        if not names:
            return entity
        return replace(entity, name=names[0], aliases=tuple(names[1:]))

    def area_aliases(self, aliases: Mapping[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
        merged = dict(aliases)
        for area, entry in self._data["area"].items():
            merged[area] = tuple(_merged(aliases.get(area, ()), entry))
        return merged

    def floors(self, floors: Mapping[str, Floor]) -> dict[str, Floor]:
        merged = dict(floors)
        for floor, entry in self._data["floor"].items():
            if floor in floors:
                merged[floor] = Floor(tuple(_merged(floors[floor].aliases, entry)), floors[floor].areas)
        return merged

    # --- storage --------------------------------------------------------------------------

    def _save(self, data: dict[str, Any]) -> None:
        """Write `data`, then make it the names the hub uses; NamesNotSaved (nothing changed) if
        the folder cannot be written."""
        if self._file is not None:
            try:
                self._file.save(data)
            except OSError as err:
                raise NamesNotSaved(f"the names could not be saved in {self._file.path.parent} "
                                    f"({err.strerror or err}); nothing was changed") from None
        self._data = data
        self._untargeted = frozenset(data["untargeted"])
        self._store.refresh_names()


def _merged(own: tuple[str, ...], entry: Mapping[str, list[str]]) -> list[str]:
    """The home's names less the removed ones, then the added ones; each once."""
    removed = {fold(n) for n in entry.get("removed", [])}
    names: dict[str, str] = {}
    for name in (*own, *entry.get("added", [])):
        if fold(name) not in removed:
            names.setdefault(fold(name), name)
    return list(names.values())
