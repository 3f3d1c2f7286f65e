"""The ways people say a device's name: "HeatPump" → "heat pump", "Office RGBW Lights" → "office light".

Names in a home are written for a screen; speech-to-text writes what was said. The slot lists of
the fast path carry these variants so a strict match finds them:
- the name as written, case and accents folded, German umlauts as digraphs ("Kueche");
- CamelCase split ("HeatPump" → "Heat Pump");
- technical capitals dropped ("Office RGBW Lights" → "Office Lights"), unless that is all there is;
- the last word's singular or plural when it is a device word ("lights" ↔ "light");
- the name without its device word ("Office Lights" → "Office"), unless that leaves only an area's
  name or nothing (the area would then mean one device), and without a trailing word for
  "device" in any language ("Ceiling light device" → "Ceiling light").
"""

from __future__ import annotations

import re
from typing import Iterable

from hub.home.normalize import fold
from hub.home.vocabulary import domain_words, generic_device_words

_UMLAUTS = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "Ä": "Ae", "Ö": "Oe", "Ü": "Ue", "ß": "ss"})
# English number of a device word: the only inflection common enough in names to generate
_PLURALS = {"light": "lights", "lamp": "lamps", "fan": "fans", "blind": "blinds", "shade": "shades",
            "shutter": "shutters", "curtain": "curtains", "speaker": "speakers", "plug": "plugs",
            "switch": "switches", "heater": "heaters", "bulb": "bulbs", "spot": "spots",
            "spotlight": "spotlights", "strip": "strips", "cover": "covers"}
_SINGULARS = {plural: singular for singular, plural in _PLURALS.items()}


def spellings(texts: Iterable[str]) -> list[str]:
    """Each text as written plus accent-free forms ("Küche", "kuche", "Kueche") for plain STT."""
    found: dict[str, None] = {}
    seen: set[str] = set()
    for text in texts:
        text = " ".join(text.split())
        for spelling in (text, fold(text, "en"), text.translate(_UMLAUTS)):
            if spelling and spelling.casefold() not in seen:
                seen.add(spelling.casefold())
                found[spelling] = None
    return list(found)


def split_camel(text: str) -> str:
    """"HeatPump" → "Heat Pump", "MachineÀCafé" → "Machine À Café"."""
    out = []
    for number, char in enumerate(text):
        before, after = text[number - 1] if number else "", text[number + 1:number + 2]
        # "HeatPump" → "Heat Pump"; "RGBWLights" → "RGBW Lights", "MachineÀCafé" → "… À Café"
        if char.isupper() and (before.islower() or (before.isupper() and after.islower())):
            out.append(" ")
        out.append(char)
    return "".join(out)


def name_keys(names: Iterable[str], language: str = "en") -> list[str]:
    """The folded forms the resolver looks names and aliases up by: as written and CamelCase
    split ("HeatPump": "heatpump", "heat pump"), each once, none empty."""
    return [key for key in dict.fromkeys(fold(n, language) for name in names for n in (name, split_camel(name)))
            if key]


def name_variants(name: str, area_keys: frozenset[str] = frozenset()) -> list[str]:
    """The spoken forms of one name or alias, the written one first.

    `area_keys`: folded area names and aliases; a variant that is only an area is left out.
    """
    written = " ".join(name.split())
    if not written:
        return []
    forms: dict[str, None] = {written: None}
    split = split_camel(written)
    forms[split] = None
    words = split.split()
    plain = [w for w in words if not _is_code(w)]
    if plain and len(plain) < len(words):
        forms[" ".join(plain)] = None
    devices = domain_words("en")
    generic = generic_device_words()
    for form in list(forms):
        form_words = form.split()
        if len(form_words) > 1 and fold(form_words[-1]) in generic:  # "Ceiling light device"
            form_words = form_words[:-1]
            forms[" ".join(form_words)] = None
        last = form_words[-1].lower()
        other = _PLURALS.get(last) or _SINGULARS.get(last)
        if other and len(form_words) > 1:
            forms[" ".join([*form_words[:-1], other])] = None
        if len(form_words) > 1 and (last in devices or last in _SINGULARS or last in _PLURALS):
            rest = " ".join(form_words[:-1])
            if fold(rest) not in area_keys and fold(rest) not in devices:
                forms[rest] = None
    return spellings(forms)


def _is_code(word: str) -> bool:
    """"RGBW", "LED", "E27": a technical label rather than a spoken word. A device word ("TV")
    and a number ("Lamp 2" is not "Lamp 1") are kept."""
    letters = re.sub(r"[^A-Za-z0-9]", "", word)
    if len(letters) < 2 or word.lower() in domain_words("en") or letters.isdigit():
        return False
    return letters.isupper()
