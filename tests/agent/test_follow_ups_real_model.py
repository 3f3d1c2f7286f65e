"""Issue #28 points 3 and 4 with the real stand-in (SmolLM2-135M-Instruct, the embedded default)
behind the agent: follow-ups and relative commands in five languages are carried out by the
hub's own templates and the fast path, and the model is never reached for them (its stream is
counted); what the model would have done with them is what issue #28 reported."""

from __future__ import annotations

from pathlib import Path
from typing import Any, AsyncIterator

import pytest

from hub.llm.llama_engine import LlamaEngine
from hub.llm.types import GenerationRequest

from async_policy.async_helpers import TestHub

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

# (language, what is said, the entity it must change, the state or attribute after it)
TURNS: list[tuple[str, str, str, Any]] = [
    ("en", "turn on the kitchen light", "light.kitchen", "on"),
    ("en", "a bit dimmer", "light.kitchen", 90),
    ("en", "and the bedroom too", "light.bedroom", 90),
    ("en", "turn them off", "light.bedroom", "off"),
    ("de", "Schalte das Licht in der Küche aus", "light.kitchen", "off"),
    ("de", "schalte es wieder ein", "light.kitchen", "on"),
    ("de", "stell es auf 50 %", "light.kitchen", 50),
    ("fr", "il fait trop froid ici", "climate.living_room", 22.0),
    ("fr", "un peu plus chaud", "climate.living_room", 23.0),
    ("es", "sube la música un poco", "media_player.living_room_speaker", 35),
    ("es", "más fuerte", "media_player.living_room_speaker", 45),
    ("nl", "het is te donker in de slaapkamer", "light.bedroom", 20),
    ("nl", "zet hem uit", "light.bedroom", "off"),
]


class CountingEngine:
    """The real engine, with its generations counted."""

    def __init__(self, engine: LlamaEngine) -> None:
        self._engine = engine
        self.generations = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)

    def stream(self, request: GenerationRequest) -> AsyncIterator[Any]:
        self.generations += 1
        return self._engine.stream(request)


@pytest.fixture(scope="module")
def smollm(smollm_path: Path):
    import asyncio
    engine = LlamaEngine(smollm_path, n_ctx=4096, seed=11)
    yield engine
    asyncio.run(engine.close())


def observed(hub: TestHub, entity_id: str, expected: Any) -> Any:
    entity = hub.store.get(entity_id)
    if isinstance(expected, str):
        return entity.state
    if entity.domain == "light":
        return round(entity.attributes["brightness"] * 100 / 255)
    if entity.domain == "climate":
        return entity.attributes["temperature"]
    return round(entity.attributes["volume_level"] * 100)


async def test_the_stand_in_is_never_reached_for_follow_ups_and_relative_commands(tmp_path, smollm) -> None:
    engine = CountingEngine(smollm)
    hub = TestHub(tmp_path, engine, fast_path=True)  # type: ignore[arg-type]
    assert hub.agent.stand_in and not hub.agent.model_acts
    for language, said, entity_id, expected in TURNS:
        result = await hub.ask(said, language=language, area="Living room" if "ici" in said else None)
        assert result.path == "fast_path" and result.language == language, (said, result.reply)
        assert observed(hub, entity_id, expected) == expected, (said, result.reply)
        print(f"[{language}] {said!r} → {result.reply!r}")
    assert engine.generations == 0, "the stand-in was asked"
    # the control: something outside every template does reach it
    chat = await hub.ask("tell me a joke")
    assert chat.path == "model" and engine.generations == 1
