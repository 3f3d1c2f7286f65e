"""The room and device words of every language (hub/locales/words/<language>.yaml)."""

from __future__ import annotations

from importlib import resources

import pytest
import yaml

from hub.home.vocabulary import area_translations, domain_words
from hub.locales import SUPPORTED_LANGUAGES

ROOMS = ("kitchen", "living_room", "bedroom", "bathroom", "office", "hallway", "garage", "garden",
         "dining_room", "basement", "attic", "kids_room", "front_yard")
DEVICES = ("light", "switch", "fan", "cover", "climate", "lock", "media_player", "vacuum", "valve", "lawn_mower")
FLOORS = ("downstairs", "upstairs", "outside")  # issue #40: "the upstairs vacuum" in every language


def words_file(language: str) -> dict:
    path = resources.files("hub.locales").joinpath("words", f"{language}.yaml")
    return yaml.safe_load(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("language", SUPPORTED_LANGUAGES)
def test_every_language_names_every_room_and_kind_of_device(language: str) -> None:
    data = words_file(language)
    assert set(data) - {"word.courtesy"} == {f"area.{r}" for r in ROOMS} | {f"device.{d}" for d in DEVICES} | {
        f"floor.{f}" for f in FLOORS} | {"word.device", "word.filler"}  # "now", "please": where a language has them
    for key, text in data.items():
        words = text.split("|")
        assert isinstance(text, str) and all(w and w == w.strip() for w in words), f"{language} {key}"
    assert set(domain_words(language).values()) == set(DEVICES)


def test_rooms_translate_between_languages() -> None:
    assert "Küche" in area_translations(("Kitchen",), "de")
    assert "kitchen" in area_translations(("Küche",), "fr") and "cuisine" in area_translations(("Küche",), "fr")
    assert "bureau" in area_translations(("Office",), "fr")
    assert area_translations(("Ana's den",), "de") == ()
