"""The name book over a real entity store: names added and taken away, an untargeted entity gone
from every reader, areas' and floors' names, what is kept on disk, and a disk that refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from hub.home.entities import Entity, EntityStore
from hub.home.name_book import NameBook, NameRefused, NamesNotSaved, clean_name
from hub.home.resolve import EntityResolver


def home(tmp_path: Path) -> tuple[EntityStore, NameBook]:
    store = EntityStore()
    book = NameBook(tmp_path / "names.json", store)
    store.set_overlay(book)
    store.upsert(Entity("light.desk", "Desk lamp", area="Office", aliases=("Work light",)))
    store.upsert(Entity("switch.plug", "Plug", area="Office"))
    store.set_area_aliases("Office", ["Study"])
    store.set_floor("Upstairs", ["Office"], ["First floor"])
    return store, book


def test_names_apply_at_once_and_survive_a_restart(tmp_path: Path) -> None:
    store, book = home(tmp_path)
    resolver = EntityResolver(store)
    version = store.version
    assert clean_name(" Reading\u200b  lamp ") == "Reading lamp"
    book.add("entity", "light.desk", " Reading\u200b lamp")
    assert store.version > version
    assert [e.entity_id for e in resolver.resolve(name="reading lamp")] == ["light.desk"]
    book.remove("entity", "light.desk", "Desk lamp")
    assert store.get("light.desk").name == "Work light"  # the next name is what the hub says
    assert store.get("light.desk").aliases == ("Reading lamp",)
    book.add("area", "Office", "Den")
    book.remove("area", "Office", "Study")
    assert store.area_aliases() == {"Office": ("Den",)}
    book.add("floor", "Upstairs", "Top")
    assert store.floors()["Upstairs"].aliases == ("First floor", "Top")
    book.set_untargeted(["switch.plug"])
    assert store.get("switch.plug") is None and "switch.plug" not in store
    assert store.known("switch.plug") is not None
    store.update_state("switch.plug", "on")  # its backend still reports it
    assert store.get("switch.plug") is None

    again, _ = home(tmp_path)  # a restart: the book is read back
    assert again.get("light.desk").name == "Work light" and again.get("switch.plug") is None
    assert again.area_aliases() == {"Office": ("Den",)}
    book.set_untargeted([])
    assert store.get("switch.plug").state == "on"  # back, with the state it has now


def test_refusals_and_a_disk_that_cannot_be_written(tmp_path: Path) -> None:
    store, book = home(tmp_path)
    with pytest.raises(NameRefused, match="already answers"):
        book.add("entity", "light.desk", "work LIGHT")
    with pytest.raises(NameRefused) as own:
        book.remove("area", "Office", "Office")
    assert own.value.code == "own_name"
    with pytest.raises(NameRefused) as last:
        book.remove("entity", "switch.plug", "Plug")
    assert last.value.code == "last_name"
    with pytest.raises(NameRefused) as unknown:
        book.set_untargeted(["light.nowhere"])
    assert unknown.value.code == "unknown_entity"
    (tmp_path / "names.json").unlink(missing_ok=True)
    (tmp_path / "names.json").mkdir()
    with pytest.raises(NamesNotSaved, match="nothing was changed"):
        book.add("entity", "light.desk", "Lamp")
    assert store.get("light.desk").aliases == ("Work light",)
    assert not (tmp_path / "names.tmp").exists()
