"""A group the templates matched (a kind of device in a room: "close the windows in the kitchen")
is every such device there, as HA's handlers take it: never "which one?" because other rooms'
devices share the kind's word in their names ("ceiling window", "small window"). Real hassil
matcher and HA's sentence data, the real store, registry and demo backend."""

from __future__ import annotations

import pytest

from hub.home.entities import Entity
from tests.home.test_fast_path import Home

pytestmark = pytest.mark.timeout(120)

WINDOWS = {  # language → (kitchen, bathroom), each room's windows named with the word "window"
    "hr": (("Kuhinja", ["kuhinji"]), ("Kupaonica", ["kupaonici"]), ["stropni prozor", "kutni prozor"], "mali prozor"),
    "sl": (("Kuhinja", ["kuhinji"]), ("Kopalnica", ["kopalnici"]), ["strešno okno", "kotno okno"], "levo okno"),
    "en": (("Kitchen", []), ("Bathroom", []), ["ceiling window", "corner window"], "small window"),
}


def home_of(language: str) -> Home:
    home = Home()
    for entity_id in [e.entity_id for e in home.store.all()]:
        home.store.remove(entity_id)
    (kitchen, kitchen_aliases), (bathroom, bathroom_aliases), in_kitchen, in_bathroom = WINDOWS[language]
    home.store.set_area_aliases(kitchen, kitchen_aliases)
    home.store.set_area_aliases(bathroom, bathroom_aliases)
    for number, name in enumerate(in_kitchen):
        home.store.upsert(Entity(f"cover.kitchen_{number}", name, "open", device_class="window",
                                 area=kitchen, source="demo"))
    home.store.upsert(Entity("cover.bathroom", in_bathroom, "open", device_class="window", area=bathroom,
                             source="demo"))
    return home


@pytest.mark.parametrize("text, language", [
    ("zatvori prozore u kuhinji", "hr"),
    ("zapri okna v kuhinji", "sl"),
    ("close the windows in the kitchen", "en"),
])
async def test_a_kind_of_device_in_a_room_is_every_one_there(text, language) -> None:
    home = home_of(language)
    outcome = await home.say(text, language)
    assert outcome is not None, text
    assert sorted(c.arguments["entity_id"] for c in outcome.calls) == ["cover.kitchen_0", "cover.kitchen_1"]
    assert outcome.candidates == []
    assert home.store.get("cover.bathroom").state == "open"
