"""Every supported language has a filler-word table (`word.filler` in hub/locales/words), so the
resolver can tell what a command says about a device from its verbs, articles and prepositions
(issue 16: resolution never swaps a device). On the demo home, "turn on the light in the
kitchen" fits the kitchen light in each language, and "turn on the radio in the kitchen" (the
kitchen has no radio) fits nothing: without the table the kitchen light would have been taken."""

from __future__ import annotations

from importlib import resources

import pytest
import yaml

from hub.backends.demo.home import load_demo_home
from hub.home.entities import EntityStore
from hub.home.normalize import fold
from hub.home.resolve import EntityResolver
from hub.home.vocabulary import has_stop_words, stop_words
from hub.locales import SUPPORTED_LANGUAGES, UNSPACED_LANGUAGES

COMMANDS = {  # language: (the kitchen light, the kitchen's radio, which the home lacks)
    "ar": ("شغل الضوء في المطبخ", "شغل الراديو في المطبخ"),
    "bg": ("Включи лампата в кухнята", "Пусни радиото в кухнята"),
    "ca": ("Encén el llum de la cuina", "Encén la ràdio de la cuina"),
    "cs": ("Rozsviť světlo v kuchyni", "Zapni rádio v kuchyni"),
    "da": ("Tænd lyset i køkkenet", "Tænd radioen i køkkenet"),
    "de": ("Schalte das Licht in der Küche ein", "Schalte das Radio in der Küche ein"),
    "el": ("Άναψε το φως στην κουζίνα", "Άναψε το ραδιόφωνο στην κουζίνα"),
    "en": ("turn on the light in the kitchen", "turn on the radio in the kitchen"),
    "es": ("Enciende la luz de la cocina", "Enciende la radio de la cocina"),
    "fi": ("Sytytä valo keittiössä", "Laita radio päälle keittiössä"),
    "fr": ("Allume la lumière de la cuisine", "Allume la radio de la cuisine"),
    "he": ("הדלק את האור של המטבח", "הדלק את הרדיו של המטבח"),
    "hi": ("रसोई की लाइट चालू करो", "रसोई का रेडियो चालू करो"),
    "hr": ("Upali svjetlo u kuhinji", "Uključi radio u kuhinji"),
    "hu": ("Kapcsold fel a lámpát a konyhában", "Kapcsold be a rádiót a konyhában"),
    "id": ("Nyalakan lampu di dapur", "Nyalakan radio di dapur"),
    "it": ("Accendi la luce della cucina", "Accendi la radio della cucina"),
    "ms": ("Hidupkan lampu di dapur", "Hidupkan radio di dapur"),
    "nb": ("Slå på lyset på kjøkkenet", "Slå på radioen på kjøkkenet"),
    "nl": ("Zet het licht in de keuken aan", "Zet de radio in de keuken aan"),
    "pl": ("Włącz światło w kuchni", "Włącz radio w kuchni"),
    "pt": ("Liga a luz da cozinha", "Liga o rádio da cozinha"),
    "ro": ("Aprinde lumina în bucătărie", "Pornește radioul în bucătărie"),
    "ru": ("Включи свет на кухне", "Включи радио на кухне"),
    "sk": ("Zapni svetlo v kuchyni", "Zapni rádio v kuchyni"),
    "sl": ("Prižgi luč v kuhinji", "Vklopi radio v kuhinji"),
    "sr": ("Upali svetlo u kuhinji", "Uključi radio u kuhinji"),
    "sv": ("Tänd lampan i köket", "Sätt på radion i köket"),
    "tr": ("Mutfaktaki ışığı aç", "Mutfaktaki radyoyu aç"),
    "uk": ("Увімкни світло на кухні", "Увімкни радіо на кухні"),
    "vi": ("Bật đèn nhà bếp", "Bật radio nhà bếp"),
}


@pytest.fixture(scope="module")
def resolver() -> EntityResolver:
    store = EntityStore()
    load_demo_home(store)
    return EntityResolver(store)


@pytest.mark.parametrize("language", SUPPORTED_LANGUAGES)
def test_every_language_has_its_own_filler_words(language: str) -> None:
    path = resources.files("hub.locales").joinpath("words", f"{language}.yaml")
    own = yaml.safe_load(path.read_text(encoding="utf-8"))["word.filler"].split("|")
    assert len(own) >= 15 and stop_words(language) >= {fold(w, language) for w in own}, language
    assert has_stop_words(language) is (language not in UNSPACED_LANGUAGES)
    assert set(COMMANDS) == set(SUPPORTED_LANGUAGES) - UNSPACED_LANGUAGES


@pytest.mark.parametrize("language", sorted(COMMANDS))
def test_a_command_fits_its_device_and_a_missing_one_fits_nothing(resolver: EntityResolver, language: str) -> None:
    light, radio = COMMANDS[language]
    fit = resolver.fit(light, language)
    assert [e.entity_id for e in fit.entities] == ["light.kitchen"] and not fit.missing, (light, fit)
    assert resolver.match(radio, language).best, "a neighbour is there to be swapped in"
    fit = resolver.fit(radio, language)
    assert fit.entities == [] and fit.missing, (radio, fit)
