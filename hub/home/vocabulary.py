"""Small per-language word tables: which words point at a kind of device, which never do.

Kept deliberately short: they narrow the entities an utterance may be about, they do not
understand it. Words are written naturally and folded (see `normalize.fold`) when loaded.
"""

from __future__ import annotations

from functools import lru_cache

from hub.home.normalize import fold

# domain → language → words that name (or strongly hint at) that kind of device.
# English "switch" is left out on purpose: "switch off the lamp" is a verb.
_DOMAIN_WORDS: dict[str, dict[str, str]] = {
    "light": {
        "en": "light lights lamp lamps lighting bulb bulbs dark bright",
        "de": "licht lichter lampe lampen leuchte leuchten beleuchtung birne dunkel hell",
        "fr": "lumière lumières lampe lampes éclairage ampoule lampadaire sombre",
        "es": "luz luces lámpara lámparas iluminación bombilla oscuro",
        "it": "luce luci lampada lampade illuminazione lampadina buio",
        "nl": "licht lichten lamp lampen verlichting donker",
        "pt": "luz luzes lâmpada lâmpadas iluminação escuro",
        "pl": "światło światła lampa lampy lampę oświetlenie żarówka ciemno",
    },
    "switch": {
        "en": "switches plug plugs socket outlet",
        "de": "schalter steckdose steckdosen",
        "fr": "interrupteur prise prises",
        "es": "interruptor enchufe enchufes",
        "it": "interruttore presa prese",
        "nl": "schakelaar stekker stopcontact",
        "pt": "interruptor tomada",
        "pl": "przełącznik gniazdko",
    },
    "cover": {
        "en": "blind blinds shade shades shutter shutters curtain curtains awning cover covers",
        "de": "rollo rollos rollladen rolladen jalousie jalousien vorhang vorhänge markise",
        "fr": "volet volets store stores rideau rideaux",
        "es": "persiana persianas cortina cortinas toldo",
        "it": "tapparella tapparelle tenda tende persiana persiane",
        "nl": "rolluik rolluiken gordijn gordijnen zonwering jaloezie",
        "pt": "persiana persianas cortina cortinas estore",
        "pl": "roleta rolety zasłona zasłony żaluzje",
    },
    "climate": {
        "en": "thermostat heating heater temperature climate cold warm hot",
        "de": "thermostat heizung temperatur klima klimaanlage kalt warm",
        "fr": "thermostat chauffage température climatisation froid chaud",
        "es": "termostato calefacción temperatura clima frío calor",
        "it": "termostato riscaldamento temperatura climatizzatore freddo caldo",
        "nl": "thermostaat verwarming temperatuur airco koud warm",
        "pt": "termostato aquecimento temperatura frio calor",
        "pl": "termostat ogrzewanie temperatura klimatyzacja zimno ciepło",
    },
    "fan": {
        "en": "fan fans",
        "de": "ventilator ventilatoren lüfter",
        "fr": "ventilateur ventilateurs",
        "es": "ventilador ventiladores",
        "it": "ventilatore ventilatori",
        "nl": "ventilator ventilatoren",
        "pt": "ventilador ventoinha",
        "pl": "wentylator",
    },
    "media_player": {
        "en": "tv television speaker music radio player volume song",
        "de": "fernseher tv lautsprecher musik radio lautstärke lied",
        "fr": "télé télévision enceinte musique radio volume chanson",
        "es": "tele televisión altavoz música radio volumen canción",
        "it": "tv televisione altoparlante musica radio volume canzone",
        "nl": "tv televisie speaker luidspreker muziek radio volume liedje",
        "pt": "tv televisão coluna música rádio volume",
        "pl": "telewizor głośnik muzyka radio głośność",
    },
    "lock": {
        "en": "lock locks",
        "de": "schloss türschloss",
        "fr": "serrure verrou",
        "es": "cerradura",
        "it": "serratura",
        "nl": "slot deurslot",
        "pt": "fechadura",
        "pl": "zamek",
    },
    "scene": {
        "en": "scene scenes",
        "de": "szene szenen",
        "fr": "scène scènes ambiance",
        "es": "escena escenas",
        "it": "scena scene",
        "nl": "scène scènes",
        "pt": "cena cenas",
        "pl": "scena sceny",
    },
}

# Words that never point at an entity by themselves: articles, prepositions, pronouns, fillers
# and the verbs for on/off/open/close/set. Used to keep partial name matching honest.
_STOP_WORDS: dict[str, str] = {
    "en": "the a an in on off of to at for and or all my our your it its is are be please "
          "turn switch set make put open close start stop can could would you me i this that "
          "there here what whats how too very some up down",
    "de": "der die das den dem des ein eine einen einem einer im in am an auf aus von zu zum "
          "zur und oder alle bitte mach mache schalte schalt stell stelle setze setz öffne "
          "schließe kannst du mir mal es ist sind hier da ganz sehr zu",
    "fr": "le la les l un une des du de d au aux dans en sur et ou tous toutes tout s il "
          "te plait plaît allume allumer éteins éteindre ouvre ouvrir ferme fermer mets règle "
          "peux tu me moi est ici trop très",
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


@lru_cache(maxsize=64)
def domain_words(language: str) -> dict[str, str]:
    """Folded word or two-word phrase → domain, for `language` plus English.

    English words are always included: device words like "TV" or "spot" are often borrowed.
    """
    table: dict[str, str] = {}
    for lang in ("en", language):
        for domain, per_language in _DOMAIN_WORDS.items():
            for word in per_language.get(lang, "").split():
                table.setdefault(fold(word, language), domain)
    return table


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
