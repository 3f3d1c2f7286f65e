"""Issue 16 with the real stand-in models (SmolLM2-135M-Instruct, base Gemma 3 270M) on the demo
home, allowed to act (`model_home_control`) so that the question guard is what keeps them still:
40 state questions in 8 languages run no device action and leave every device as it was."""

from __future__ import annotations


import pytest

from hub.llm.llama_engine import LlamaEngine

from async_policy.async_helpers import TestHub

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

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


async def test_forty_state_questions_in_eight_languages_act_on_nothing(tmp_path, real_stand_in: LlamaEngine) -> None:
    assert sum(map(len, QUESTIONS.values())) == 40
    hub = TestHub(tmp_path, real_stand_in, model_home_control=True, max_tokens=24)
    assert hub.agent.model_acts
    before = {e.entity_id: e.state for e in hub.store.all()}
    actions = hub.registry.device_actions()
    attempted = []
    for language, questions in QUESTIONS.items():
        for n, question in enumerate(questions):
            result = await hub.ask(question, conversation_id=f"{language}{n}", language=language)
            assert result.reply, question
            assert "{" not in result.reply, (question, result.reply)
            attempted += [f.call.name for f in result.tool_calls if f.call.name in actions]
            assert not any(f.ok for f in result.tool_calls if f.call.name in actions), question
    assert hub.backend.calls == []
    assert {e.entity_id: e.state for e in hub.store.all()} == before
    print(f"{real_stand_in.info.name}: 40 questions, {len(attempted)} action calls attempted and refused")
