"""Per-language words: which point at a kind of device or a kind of room, which never do.

Kept deliberately short: they narrow the entities an utterance may be about, they do not
understand it. Words are written naturally and folded (see `normalize.fold`) when loaded.
Device and room words live as data beside the phrases (`hub/locales/words/<language>.yaml`);
the room words let a home named in one language be addressed in another.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

import yaml

from hub.home.normalize import fold
from hub.locales import SUPPORTED_LANGUAGES

# Words that never point at an entity by themselves: articles, prepositions, pronouns, fillers
# and the verbs for on/off/open/close/set. Used to keep partial name matching honest.
_STOP_WORDS: dict[str, str] = {
    "en": "the a an in on off of to at for and or all my our your it its is are be please "
          "turn switch set make put open close start stop can could would you me i this that "
          "there here what whats how too very some up down every everywhere everything house home",
    "de": "der die das den dem des ein eine einen einem einer im in am an auf aus von zu zum "
          "zur und oder alle bitte mach mache schalte schalt stell stelle setze setz öffne "
          "schließe kannst du mir mal es ist sind hier da ganz sehr zu überall jede jedes haus",
    "fr": "le la les l un une des du de d au aux dans en sur et ou tous toutes tout s il "
          "te plait plaît allume allumer éteins éteindre ouvre ouvrir ferme fermer mets règle "
          "peux tu me moi est ici trop très partout maison",
    "es": "el la los las lo un una unos unas del de al en y o todo todos todas por favor "
          "enciende encender apaga apagar abre abrir cierra cerrar pon poner ajusta puedes "
          "me mi es aquí muy demasiado",
    "it": "il lo la i gli le un una uno del della dei delle nel nella in di a e o tutti tutte "
          "per favore accendi accendere spegni spegnere apri chiudi metti imposta puoi mi è "
          "qui molto troppo",
    "nl": "de het een in op van aan uit naar en of alle alles mijn graag zet doe open sluit "
          "maak kun je me is hier te erg heel",
    "pt": "o a os as um uma do da dos das no na nos nas em de e ou todos todas por favor "
          "liga ligar desliga desligar abre abrir fecha fechar põe coloca ajusta podes pode "
          "me meu minha é aqui muito",
    "pl": "w we na do z ze i lub wszystkie proszę włącz wyłącz otwórz zamknij ustaw zrób "
          "możesz mi jest tu tutaj bardzo zbyt",
}


@lru_cache(maxsize=None)
def _words(language: str) -> dict[str, tuple[str, ...]]:
    """One language's `hub/locales/words/<language>.yaml`: key → its words ({} if none)."""
    resource = resources.files("hub.locales").joinpath("words", f"{language}.yaml")
    if not resource.is_file():
        return {}
    data = yaml.safe_load(resource.read_text(encoding="utf-8")) or {}
    return {key: tuple(w.strip() for w in str(text).split("|") if w.strip()) for key, text in data.items()}


def all_words(language: str) -> tuple[str, ...]:
    """Every device, room and other word of the language's word file."""
    return tuple(word for words in _words(language).values() for word in words)


@lru_cache(maxsize=64)
def domain_words(language: str) -> dict[str, str]:
    """Folded word or two-word phrase → domain, for `language` plus English.

    English words are always included: device words like "TV" or "spot" are often borrowed.
    English "switch" is left out on purpose: "switch off the lamp" is a verb.
    """
    table: dict[str, str] = {}
    for lang in ("en", language):
        for key, words in _words(lang).items():
            if key.startswith("device."):
                for word in words:
                    table.setdefault(fold(word, language), key.removeprefix("device."))
    return table


@lru_cache(maxsize=1)
def generic_device_words() -> frozenset[str]:
    """Folded words for "device" in every language ("Gerät", "appareil"): a name may end with one
    that people leave out when they say it."""
    return frozenset(fold(w) for lang in SUPPORTED_LANGUAGES for w in _words(lang).get("word.device", ()))


@lru_cache(maxsize=1)
def _area_concepts() -> dict[str, frozenset[str]]:
    """Folded area word in any language → the keys of the kinds of room it names."""
    found: dict[str, set[str]] = {}
    for language in SUPPORTED_LANGUAGES:
        for key, words in _words(language).items():
            if key.startswith("area."):
                for word in words:
                    found.setdefault(fold(word), set()).add(key)
    return {word: frozenset(keys) for word, keys in found.items()}


@lru_cache(maxsize=4096)
def area_translations(names: tuple[str, ...], language: str) -> tuple[str, ...]:
    """An area's name in `language` and English when its name or an alias is a common room in
    any language ("Kitchen" → "Küche" for German, "Küche" → "kitchen"); () for one that is not
    ("Ana's den")."""
    keys = {key for name in names for key in _area_concepts().get(fold(name), ())}
    known = {fold(n) for n in names}
    words = {w for lang in (language, "en") for key in keys for w in _words(lang).get(key, ())}
    return tuple(sorted(w for w in words if fold(w) not in known))


@lru_cache(maxsize=64)
def has_stop_words(language: str) -> bool:
    """Whether the language has its own filler-word table (else only English's applies)."""
    return language in _STOP_WORDS


def stop_words(language: str) -> frozenset[str]:
    words = _STOP_WORDS.get(language, "") + " " + _STOP_WORDS["en"]
    return frozenset(fold(word, language) for word in words.split())


def domain_for_word(word: str, language: str) -> str | None:
    """The domain a (folded or unfolded) word names, if any: "Lampen" → "light"."""
    return domain_words(language).get(fold(word, language))
