"""Issue 16 on the demo home, the model allowed to act (`model_home_control`) so that the question
guard is what keeps it still: 40 state questions in 8 languages run no device action and leave
every device as it was, with a model that calls an action on every one of them, and a sample of
ten (every language, every kind of question) with each real stand-in model (SmolLM2-135M-Instruct,
base Gemma 3 270M)."""

from __future__ import annotations


import pytest

from hub.llm.llama_engine import LlamaEngine
from hub.llm.types import GenerationRequest

from async_policy.async_helpers import TestHub
from helpers.scripted_engine import ScriptedEngine, call, text

pytestmark = pytest.mark.timeout(600)

QUESTIONS = {
    "en": ["Is the desk lamp on?", "what lights are on?", "what is the temperature of the thermostat",
           "Is the front door locked?", "How warm is it outside?"],
    "de": ["Ist die Schreibtischlampe an?", "Welche Lichter sind an?", "Wie warm ist es draußen?",
           "Ist die Haustür abgeschlossen?", "Läuft die Kaffeemaschine?"],
    "fr": ["Est-ce que la lampe de bureau est allumée ?", "Quelles lumières sont allumées ?",
           "Quelle température fait-il dehors ?", "La porte d'entrée est-elle verrouillée ?",
           "Les stores de la chambre sont-ils ouverts ?"],
    "es": ["¿Está encendida la luz de la cocina?", "¿Qué luces están encendidas?", "¿Qué temperatura hace fuera?",
           "¿Está cerrada la puerta principal?", "¿Está encendida la cafetera?"],
    "it": ["La luce della cucina è accesa?", "Quali luci sono accese?", "Che temperatura c'è fuori?",
           "La porta d'ingresso è chiusa a chiave?", "Le tapparelle della camera sono aperte?"],
    "nl": ["Staat de bureaulamp aan?", "Welke lampen zijn aan?", "Hoe warm is het buiten?",
           "Is de voordeur op slot?", "Staat het koffiezetapparaat aan?"],
    "pl": ["Czy lampa na biurku jest włączona?", "Które światła są włączone?", "Jaka jest temperatura na zewnątrz?",
           "Czy drzwi wejściowe są zamknięte?", "Czy ekspres do kawy jest włączony?"],
    "pt": ["A luz da cozinha está ligada?", "Que luzes estão ligadas?", "Qual é a temperatura lá fora?",
           "A porta da frente está trancada?", "A máquina de café está ligada?"],
}

# each language once, each kind of question (one device's state, which lights, a temperature, a
# lock, another device) twice: a real model turn is seconds on two cores, and what keeps it still
# is the same guard the scripted model meets with all forty
SAMPLE = [(language, QUESTIONS[language][kind]) for language, kind in
          [("en", 0), ("de", 1), ("fr", 2), ("es", 3), ("it", 4), ("nl", 0), ("pl", 1), ("pt", 2), ("de", 3),
           ("fr", 4)]]


def _acting(request: GenerationRequest) -> list:
    """What small models did with questions: call an action on a device, whatever was offered."""
    if request.messages[-1].role == "tool":
        return text("Done.")
    return [call("turn_on", entity_id="light.kitchen"), call("unlock", entity_id="lock.front_door")]


async def test_forty_state_questions_in_eight_languages_act_on_nothing_whatever_the_model_calls(tmp_path) -> None:
    assert sum(map(len, QUESTIONS.values())) == 40
    engine = ScriptedEngine([_acting] * 200)
    hub = TestHub(tmp_path, engine, model_home_control=True)
    await _ask_all(hub, [(language, q) for language, questions in QUESTIONS.items() for q in questions])
    assert len(engine.requests) >= 40


@pytest.mark.slow
async def test_ten_state_questions_in_eight_languages_act_on_nothing(tmp_path, real_stand_in: LlamaEngine) -> None:
    assert {language for language, _ in SAMPLE} == QUESTIONS.keys()
    assert {QUESTIONS[language].index(q) for language, q in SAMPLE} == set(range(5))
    attempted = await _ask_all(TestHub(tmp_path, real_stand_in, model_home_control=True, max_tokens=24), SAMPLE)
    print(f"{real_stand_in.info.name}: {len(SAMPLE)} questions, {len(attempted)} action calls attempted and refused")


async def _ask_all(hub: TestHub, questions: list[tuple[str, str]]) -> list[str]:
    """Each question in its own conversation: a reply in words, no device action run, every
    device as it was; the action calls the model attempted."""
    assert hub.agent.model_acts
    before = {e.entity_id: e.state for e in hub.store.all()}
    actions = hub.registry.device_actions()
    attempted = []
    for n, (language, question) in enumerate(questions):
        result = await hub.ask(question, conversation_id=f"{language}{n}", language=language)
        assert result.reply, question
        assert "{" not in result.reply, (question, result.reply)
        attempted += [f.call.name for f in result.tool_calls if f.call.name in actions]
        assert not any(f.ok for f in result.tool_calls if f.call.name in actions), question
    assert hub.backend.calls == []
    assert {e.entity_id: e.state for e in hub.store.all()} == before
    return attempted
