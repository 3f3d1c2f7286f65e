"""The name book over a real entity store: names added and taken away, an untargeted entity gone
from every reader, areas' and floors' names, what is kept on disk, and a disk that refuses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hub.home.entities import Entity, EntityStore
from hub.home.name_book import NameBook, NameRefused, NamesNotSaved, clean_name
from hub.home.resolve import EntityResolver
from hub.state_files import set_aside_under


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
    assert not list(tmp_path.glob("*.tmp"))


def damaged_book(tmp_path: Path, text: str) -> tuple[EntityStore, NameBook]:
    (tmp_path / "names.json").write_text(text, encoding="utf-8")
    return home(tmp_path)


def test_a_cut_file_keeps_its_untargeted_list_and_its_content_beside_it(tmp_path: Path) -> None:
    store, book = home(tmp_path)
    book.add("entity", "light.desk", "Reading lamp")
    book.set_untargeted(["switch.plug"])
    whole = (tmp_path / "names.json").read_text()
    cut = whole[: whole.index("Reading")]  # cut in the names, after the untargeted list
    store, book = damaged_book(tmp_path, cut)
    assert store.get("switch.plug") is None and book.untargeted() == ["switch.plug"]
    copies = list(tmp_path.glob("names.json.damaged-*"))
    assert [c.read_text() for c in copies] == [cut]
    book.add("entity", "light.desk", "Lamp")  # the next change keeps the copy
    assert [c.read_text() for c in tmp_path.glob("names.json.damaged-*")] == [cut]
    assert home(tmp_path)[1].untargeted() == ["switch.plug"]  # written back whole: nothing more set aside
    assert len(list(tmp_path.glob("names.json.damaged-*"))) == 1


def test_a_file_cut_inside_its_untargeted_list_untargets_every_entity_it_names(tmp_path: Path) -> None:
    text = ('{"version": 1, "untargeted": ["light.desk", "switch.pl'
            ' "entity": {"switch.plug": {"added": ["Socket"], "removed": []}}')
    store, book = damaged_book(tmp_path, text)
    assert store.get("light.desk") is None and store.get("switch.plug") is None
    assert book.untargeted() == ["light.desk", "switch.plug"]
    book.set_untargeted(["switch.plug"])  # the user targets the desk lamp again
    assert store.get("light.desk") is not None and store.get("switch.plug") is None


def test_an_old_file_cut_before_its_untargeted_list_untargets_what_it_names(tmp_path: Path) -> None:
    """0.6.0 wrote the untargeted list last: a cut file lost it, and every device in it was back."""
    text = '{"version": 1, "entity": {"light.desk": {"added": ["Reading lamp"], "removed": []}}, "area": {'
    store, book = damaged_book(tmp_path, text)
    assert store.get("light.desk") is None and store.get("switch.plug") is not None


def test_one_bad_name_leaves_out_that_name_only(tmp_path: Path) -> None:
    text = json.dumps({"version": 1, "untargeted": ["switch.plug"],
                       "entity": {"light.desk": {"added": ["x" * 101, "Reading lamp"], "removed": []}}})
    store, book = damaged_book(tmp_path, text)
    assert store.get("switch.plug") is None
    assert store.get("light.desk").aliases == ("Work light", "Reading lamp")
    assert len(list(tmp_path.glob("names.json.damaged-*"))) == 1
    assert [e.path.name for e in set_aside_under(tmp_path)] == ["names.json"]


def test_a_file_that_cannot_be_read_untargets_every_entity_and_is_never_written_over(tmp_path: Path) -> None:
    (tmp_path / "names.json").mkdir()  # read_bytes fails (EISDIR), as on a failing disk
    store, book = home(tmp_path)
    assert store.get("light.desk") is None and store.get("switch.plug") is None
    with pytest.raises(NamesNotSaved, match="could not be set aside"):
        book.set_untargeted([])
