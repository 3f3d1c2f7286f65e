"""EntityResolver and text folding on the demo home, a few ambiguous homes and 1,000 entities."""

from __future__ import annotations

import pytest

from hub.backends.demo.home import load_demo_home
from hub.home.entities import Entity, EntityStore
from hub.home.normalize import fold
from hub.home.resolve import EntityResolver
from tests.home.generated_home import generated_entities


def ids(entities: list[Entity]) -> list[str]:
    return [e.entity_id for e in entities]


@pytest.fixture
def demo() -> tuple[EntityStore, EntityResolver]:
    store = EntityStore()
    load_demo_home(store)
    return store, EntityResolver(store)


@pytest.mark.parametrize("variants, language", [
    (("Küche", "kuche", "KÜCHE", "Kueche"), "de"),
    (("Straße", "STRASSE", "strasse"), "de"),
    (("salón", "Salon", "SALÓN"), "es"),
    (("Şalter", "salter", "ŞALTER"), "tr"),
    (("IŞIK", "ışık", "Isik"), "tr"),
    (("İzmir", "izmir"), "en"),
    (("lumière  du salon!", "Lumiere du-salon", "LUMIÈRE DU SALON"), "fr"),
])
def test_fold_makes_spelling_variants_one_key(variants: tuple[str, ...], language: str) -> None:
    assert len({fold(v, language) for v in variants}) == 1


def test_fold_keeps_different_words_apart() -> None:
    assert fold("Küche", "de") != fold("Kuchen", "de")
    assert fold("light on", "en") != fold("lighton", "en")


@pytest.mark.parametrize("name, language, expected", [
    ("Kitchen light", "en", ["light.kitchen"]),
    ("kitchen LIGHT", "en", ["light.kitchen"]),
    ("floor lamp", "en", ["light.floor_lamp"]),  # alias
    ("Stehlampe", "de", ["light.floor_lamp"]),  # alias in German
    ("Kaffeemaschine", "de", ["switch.coffee_machine"]),
    ("machine a cafe", "fr", ["switch.coffee_machine"]),  # accents dropped by STT
    ("desk", "en", ["light.desk_lamp"]),  # partial
    ("kitchen lights", "en", ["light.kitchen"]),  # area + kind of device
    ("Wohnzimmerlampe", "de", ["light.floor_lamp", "light.living_room"]),  # compound
    ("light.bedroom", "en", ["light.bedroom"]),  # an entity id
])
def test_resolve_by_name(demo, name: str, language: str, expected: list[str]) -> None:
    _, resolver = demo
    assert ids(resolver.resolve(name=name, language=language)) == expected


@pytest.mark.parametrize("area, domain, language, expected", [
    ("Küche", "light", "de", ["light.kitchen"]),
    ("kueche", "Licht", "de", ["light.kitchen"]),
    ("cuisine", "lumière", "fr", ["light.kitchen"]),
    ("salon", "lampes", "fr", ["light.floor_lamp", "light.living_room"]),
    ("Salón", "luces", "es", ["light.floor_lamp", "light.living_room"]),
    ("the living room", "light", "en", ["light.floor_lamp", "light.living_room"]),
    ("dormitorio", "persiana", "es", ["cover.bedroom_blinds"]),
    ("Kitchen", None, "en", ["light.kitchen", "switch.coffee_machine"]),
    (None, "cover", "en", ["cover.bedroom_blinds"]),
])
def test_resolve_by_area_and_domain(demo, area, domain, language, expected) -> None:
    _, resolver = demo
    assert ids(resolver.resolve(area=area, domain=domain, language=language)) == expected


def test_resolve_name_within_area_and_domain(demo) -> None:
    _, resolver = demo
    assert ids(resolver.resolve(name="light", area="Bedroom")) == ["light.bedroom"]
    assert resolver.resolve(name="floor lamp", area="Kitchen") == []
    assert resolver.resolve(name="floor lamp", domain="switch") == []


def test_unknown_things_resolve_to_nothing(demo) -> None:
    _, resolver = demo
    assert resolver.resolve(name="garage door") == []
    assert resolver.resolve(area="Garage", domain="light") == []
    assert resolver.resolve(domain="vacuum") == []
    assert resolver.resolve() == []


def test_ambiguous_names_return_every_match() -> None:
    store = EntityStore()
    store.upsert(Entity("light.lamp_1", "Lamp", area="Bedroom"))
    store.upsert(Entity("light.lamp_2", "Lamp", area="Office"))
    store.upsert(Entity("light.reading_lamp", "Reading lamp", area="Office"))
    resolver = EntityResolver(store)
    assert ids(resolver.resolve(name="lamp")) == ["light.lamp_1", "light.lamp_2"]  # exact first
    assert ids(resolver.resolve(name="lamp", area="office")) == ["light.lamp_2"]
    assert ids(resolver.resolve(name="reading")) == ["light.reading_lamp"]


def test_exact_name_wins_over_partial() -> None:
    store = EntityStore()
    store.upsert(Entity("light.desk", "Desk lamp"))
    store.upsert(Entity("light.desk_left", "Desk lamp left"))
    resolver = EntityResolver(store)
    assert ids(resolver.resolve(name="desk lamp")) == ["light.desk"]
    assert ids(resolver.resolve(name="left desk lamp")) == ["light.desk_left"]


@pytest.mark.parametrize("text, language, first", [
    ("turn on the kitchen light", "en", ["light.kitchen"]),
    ("switch off the floor lamp", "en", ["light.floor_lamp"]),
    ("Schalte das Licht in der Küche ein", "de", ["light.kitchen"]),
    ("Mach das Küchenlicht an", "de", ["light.kitchen"]),
    ("Allume la lumière de la cuisine", "fr", ["light.kitchen"]),
    ("Éteins la lampe du salon", "fr", ["light.floor_lamp", "light.living_room"]),
    ("apaga la luz del salón", "es", ["light.floor_lamp", "light.living_room"]),
    ("enciende la cafetera de la cocina", "es", ["light.kitchen", "switch.coffee_machine"]),
    ("it's too dark in the living room", "en", ["light.floor_lamp", "light.living_room"]),
    ("close the blinds", "en", ["cover.bedroom_blinds"]),
    ("start the coffee machine", "en", ["switch.coffee_machine"]),
])
def test_candidates_rank_what_the_utterance_is_about_first(demo, text, language, first) -> None:
    _, resolver = demo
    found = ids(resolver.candidates(text, language))
    assert sorted(found[: len(first)]) == first


def test_candidates_order_name_then_area_then_domain(demo) -> None:
    _, resolver = demo
    found = ids(resolver.candidates("turn on the kitchen light please", "en", limit=20))
    assert found[0] == "light.kitchen"  # its name
    assert found[1] == "switch.coffee_machine"  # same area
    assert set(found[2:]) == {"light.bedroom", "light.desk_lamp", "light.floor_lamp",
                              "light.living_room"}  # same kind, elsewhere


@pytest.mark.parametrize("text, language", [
    ("turn on", "en"), ("switch it off", "en"), ("schalte es ein", "de"), ("mach aus", "de"),
    ("allume", "fr"), ("éteins tout", "fr"), ("enciende", "es"), ("accendi", "it"),
    ("zet aan", "nl"), ("liga", "pt"), ("włącz", "pl"), ("what time is it", "en"), ("", "en"),
])
def test_on_off_words_and_chatter_are_no_entity_hints(demo, text: str, language: str) -> None:
    _, resolver = demo
    assert resolver.candidates(text, language) == []


def test_candidates_respect_limit(demo) -> None:
    _, resolver = demo
    assert len(resolver.candidates("lights", "en", limit=3)) == 3
    assert resolver.candidates("lights", "en", limit=0) == []


def test_index_follows_the_store(demo) -> None:
    store, resolver = demo
    assert resolver.resolve(name="Garage light") == []
    store.upsert(Entity("light.garage", "Garage light", area="Garage"))
    assert ids(resolver.resolve(name="garage light")) == ["light.garage"]
    store.set_area_aliases("Garage", ["Garage", "Carport"])
    assert ids(resolver.resolve(area="carport", domain="light")) == ["light.garage"]
    store.remove("light.garage")
    assert resolver.resolve(name="garage light") == []


def test_results_carry_live_state(demo) -> None:
    store, resolver = demo
    resolver.resolve(name="kitchen light")
    store.update_state("light.kitchen", "on", {"brightness": 10})
    assert resolver.resolve(name="kitchen light")[0].state == "on"


def test_area_names_and_aliases(demo) -> None:
    _, resolver = demo
    assert resolver.area_of("Wohnzimmer", "de") == "Living room"
    assert resolver.area_of("chambre", "fr") == "Bedroom"
    assert resolver.area_of("Garage") is None
    assert "Küche" in resolver.areas()["Kitchen"]


def test_thousand_entities_still_resolve() -> None:
    store = EntityStore()
    entities = generated_entities(1000)
    for entity in entities:
        store.upsert(entity)
    resolver = EntityResolver(store)
    for entity in entities[::97]:
        assert ids(resolver.resolve(name=entity.name)) == [entity.entity_id]
        assert ids(resolver.resolve(name=entity.aliases[0])) == [entity.entity_id]
        assert resolver.candidates(f"turn on the {entity.name}", "en")[0].entity_id == entity.entity_id
    kitchen_lights = resolver.resolve(area="Kitchen", domain="light")
    assert kitchen_lights and all(e.area == "Kitchen" and e.domain == "light" for e in kitchen_lights)
    assert len(resolver.candidates("turn off the lights in the attic", "en", limit=8)) == 8
    assert all(e.area == "Attic" and e.domain == "light"
               for e in resolver.candidates("turn off the lights in the attic", "en", limit=8))


def test_whole_names_only_when_asked(demo) -> None:
    _, resolver = demo
    assert ids(resolver.resolve(name="desk", partial=False)) == []
    assert ids(resolver.resolve(name="Desk lamp", partial=False)) == ["light.desk_lamp"]
    assert ids(resolver.resolve(name="kitchen lights", partial=False)) == []


def test_focused_candidates_keep_only_the_best_tier() -> None:
    store = EntityStore()
    load_demo_home(store)
    resolver = EntityResolver(store)
    assert [e.entity_id for e in resolver.candidates("the desk lamp please", "en", focused=True)] == ["light.desk_lamp"]
    focused = resolver.candidates("it's too dark in the living room", "en", focused=True)
    assert focused and all(e.area == "Living room" and e.domain == "light" for e in focused)
    assert len(resolver.candidates("it's too dark in the living room", "en")) > len(focused)


def test_match_tells_whether_entities_were_named_outright(demo) -> None:
    _, resolver = demo
    named = resolver.match("turn on the desk lamp", "en")
    assert named.named and ids(named.best) == ["light.desk_lamp"]
    assert ids(named.candidates)[0] == "light.desk_lamp"  # lower tiers still ranked behind it
    assert ids(resolver.match("Schreibtischlampe an", "de").best) == ["light.desk_lamp"]  # an alias
    area_kind = resolver.match("it's too dark in the living room", "en")
    assert not area_kind.named and area_kind.best
    assert all(e in area_kind.candidates for e in area_kind.best)
    nothing = resolver.match("tell me a joke", "en")
    assert nothing.candidates == [] and nothing.best == [] and not nothing.named
    assert resolver.match("turn on the desk lamp", "en", limit=0).candidates == []


def test_a_piece_of_a_translated_compound_is_no_name_word(demo) -> None:
    """The speaker is the "alto-falante" in Portuguese, but "alta" (high) is no form of its
    piece "alto": "the highest mountain" named the speaker."""
    _, resolver = demo
    assert resolver.match("qual é a montanha mais alta do mundo", "pt").best == []
    assert ids(resolver.match("desliga o alto-falante", "pt").best) == ["media_player.living_room_speaker"]
    assert ids(resolver.match("pausa a coluna", "pt").best) == ["media_player.living_room_speaker"]
