"""Issue #28 points 3 and 4 through the real agent, the demo home, the real fast path and the
hub's own follow-up templates, in all 35 languages: follow-ups ("and the bedroom too", "turn it
off", "make it 50 %") act on the conversation's last targets, relative and indirect commands ("a
bit dimmer", "it's too cold in here") step from the device's current state in the speaker's
area; a follow-up with nothing to refer to is answered honestly. The model (scripted, with no
rounds) is never asked: it fails the test if it is."""

from __future__ import annotations

import pytest

from hub.locales import SUPPORTED_LANGUAGES, format_number, phrase

from async_policy.async_helpers import TestHub
from helpers.scripted_engine import ScriptedEngine

pytestmark = pytest.mark.timeout(120)

# language: (and the bedroom too, turn it off, make it 50 %, a bit dimmer, it's too cold in here)
SAID: dict[str, tuple[str, str, str, str, str]] = {
    "en": ("and the bedroom too", "turn it off", "make it 50%", "a bit dimmer", "it's too cold in here"),
    "de": ("und im Schlafzimmer auch", "schalte es aus", "stell es auf 50 %", "etwas dunkler",
           "es ist zu kalt hier"),
    "fr": ("et aussi dans la chambre", "éteins-la", "mets-la à 50 %", "un peu plus sombre",
           "il fait trop froid ici"),
    "es": ("y también en el dormitorio", "apágala", "ponla al 50 %", "un poco más oscuro", "hace demasiado frío aquí"),
    "it": ("e anche in camera da letto", "spegnila", "mettila al 50 %", "un po' più scuro", "fa troppo freddo qui"),
    "pt": ("e no quarto também", "desliga-a", "põe a 50 %", "um pouco mais escuro", "está demasiado frio aqui"),
    "nl": ("en de slaapkamer ook", "zet hem uit", "zet hem op 50 %", "iets donkerder", "het is te koud hier"),
    "ca": ("i també al dormitori", "apaga-la", "posa-la al 50 %", "una mica més fosc", "fa massa fred aquí"),
    "sv": ("och sovrummet också", "stäng av den", "sätt den på 50 %", "lite mörkare", "det är för kallt här"),
    "da": ("og soveværelset også", "sluk den", "sæt den på 50 %", "lidt mørkere", "det er for koldt herinde"),
    "nb": ("og soverommet også", "slå den av", "sett den til 50 %", "litt mørkere", "det er for kaldt her"),
    "fi": ("ja makuuhuoneessa myös", "sammuta se", "aseta se 50 %", "vähän himmeämmäksi", "täällä on liian kylmä"),
    "pl": ("i w sypialni też", "wyłącz to", "ustaw na 50 %", "trochę ciemniej", "jest tu za zimno"),
    "cs": ("a v ložnici taky", "vypni to", "nastav to na 50 %", "trochu tmavší", "je tu moc zima"),
    "sk": ("a v spálni tiež", "vypni to", "nastav to na 50 %", "trochu tmavšie", "je tu príliš zima"),
    "sl": ("in v spalnici tudi", "izklopi to", "nastavi na 50 %", "malo temneje", "tukaj je preveč mrzlo"),
    "hr": ("i u spavaćoj sobi također", "isključi to", "postavi na 50 %", "malo tamnije", "ovdje je prehladno"),
    "sr": ("и у спаваћој соби такође", "искључи то", "подеси на 50 %", "мало тамније", "овде је превише хладно"),
    "ru": ("и в спальне тоже", "выключи его", "поставь на 50 %", "чуть темнее", "здесь слишком холодно"),
    "uk": ("і в спальні теж", "вимкни його", "встанови на 50 %", "трохи темніше", "тут занадто холодно"),
    "bg": ("и в спалнята също", "изключи го", "настрой на 50 %", "малко по-тъмно", "тук е твърде студено"),
    "el": ("και στο υπνοδωμάτιο επίσης", "κλείσε το", "βάλε το στο 50 %", "λίγο πιο σκούρο", "κάνει πολύ κρύο εδώ"),
    "hu": ("és a hálószobában is", "kapcsold ki", "állítsd 50 százalékra", "kicsit sötétebbre", "itt túl hideg van"),
    "ro": ("și în dormitor la fel", "stinge-o", "pune-o la 50 %", "puțin mai întunecat", "e prea frig aici"),
    "tr": ("ve yatak odası da", "onu kapat", "yüzde 50 yap", "biraz daha karanlık", "burası çok soğuk"),
    "ar": ("وفي غرفة النوم أيضا", "أطفئه", "اجعله 50 %", "أغمق قليلا", "الجو بارد جدا هنا"),
    "he": ("וגם בחדר השינה", "תכבה אותו", "תשים אותו על 50 %", "קצת יותר חשוך", "קר מדי כאן"),
    "hi": ("और बेडरूम में भी", "इसे बंद करो", "इसे 50 % पर करो", "थोड़ा धीमा करो", "यहाँ बहुत ठंड है"),
    "id": ("dan kamar tidur juga", "matikan itu", "atur menjadi 50 %", "sedikit lebih redup", "di sini terlalu dingin"),
    "ms": ("dan bilik tidur juga", "matikan itu", "tetapkan kepada 50 %", "sedikit lebih malap", "di sini terlalu sejuk"),
    "vi": ("và cả phòng ngủ nữa", "tắt nó đi", "đặt nó thành 50 %", "tối hơn một chút", "ở đây lạnh quá"),
    "th": ("ห้องนอนด้วย", "ปิดมัน", "ตั้งเป็น 50 %", "หรี่ลงนิดหน่อย", "ที่นี่หนาวเกินไป"),
    "ja": ("寝室も", "それを消して", "50%にして", "少し暗くして", "ここは寒すぎる"),
    "ko": ("침실도", "그거 꺼줘", "50%로 해줘", "조금 어둡게 해줘", "여기 너무 추워"),
    "zh": ("卧室也一样", "把它关掉", "调到50 %", "暗一点", "这里太冷了"),
}


def percent(language: str, value: int) -> str:
    return phrase(language, "unit.percent", value=format_number(value, language))


def brightness(hub: TestHub, entity_id: str) -> int:
    return round(hub.store.get(entity_id).attributes["brightness"] * 100 / 255)


@pytest.mark.parametrize("language", sorted(SAID))
async def test_follow_ups_and_relative_commands_in_every_language(tmp_path, language) -> None:
    engine = ScriptedEngine([])  # no rounds: asking the model fails the test
    hub = TestHub(tmp_path, engine, fast_path=True)
    bedroom_too, turn_off, fifty, dimmer, too_cold = SAID[language]

    first = await hub.ask(phrase(language, "command.example_turn_on", name="Kitchen light"), language=language)
    assert first.path == "fast_path" and hub.state("light.kitchen") == "on", first.reply

    also = await hub.ask(bedroom_too, language=language)
    assert hub.state("light.bedroom") == "on", also.reply
    assert [c.call.name for c in also.tool_calls] == ["turn_on"]
    assert also.reply == phrase(language, "action.turned_on", name="Bedroom light")

    off = await hub.ask(turn_off, language=language)
    assert hub.state("light.bedroom") == "off" and hub.state("light.kitchen") == "on", off.reply

    half = await hub.ask(fifty, language=language)
    assert hub.state("light.bedroom") == "on" and brightness(hub, "light.bedroom") == 50, half.reply

    dimmed = await hub.ask(dimmer, language=language)
    assert brightness(hub, "light.bedroom") == 40, dimmed.reply
    assert dimmed.reply == phrase(language, "relative.down", name="Bedroom light", value=percent(language, 40))

    cold = await hub.ask(too_cold, language=language, area="Living room")
    assert hub.store.get("climate.living_room").attributes["temperature"] == 22.0, cold.reply
    assert cold.reply == phrase(language, "relative.up", name="Living room thermostat",
                                value=phrase(language, "unit.degrees", value=format_number(22, language)))

    nothing = await hub.ask(turn_off, conversation_id="fresh", language=language)
    assert nothing.reply == phrase(language, "follow_up.unknown") and nothing.tool_calls == []
    assert hub.state("light.bedroom") == "on"

    for result in (also, off, half, dimmed, cold, nothing):
        assert result.path == "fast_path" and result.language == language
    assert engine.requests == [], "the model was asked"


def test_every_language_has_follow_up_templates_and_a_test() -> None:
    assert sorted(SAID) == sorted(SUPPORTED_LANGUAGES)
