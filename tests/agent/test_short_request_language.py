"""The language of a short request (issue #28 point 6): a few words say little, so the home's
language stands unless the text is plainly another ("start vacuuming" leaned Dutch and was
answered in Dutch in an English home); the names said count for the language they are in
(tests/understanding/test_language.py: "como está Estores" is Portuguese in a home named in
Portuguese). Through the real agent with real identification, the language left out as HA
2025.4.4 does."""

from __future__ import annotations

import pytest

from hub.understanding import language as language_id

from agent.test_languages import DemoHub
from helpers.scripted_engine import text
from hub.agent.types import TurnRequest

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize("home_language, utterance, expected", [
    ("en", "start vacuuming", "en"),
    ("en", "dim it", "en"),
    ("en", "Licht aus", "de"),  # plainly German: German, whatever the home speaks
    ("en", "doe het licht uit", "nl"),
    ("en", "apaga la luz", "es"),
    ("de", "turn off the desk lamp", "en"),
])
async def test_a_short_request_is_answered_in_the_homes_language_unless_plainly_another(
        home_language, utterance, expected) -> None:
    assert await language_id.prepare()
    hub = DemoHub([text("OK.")] * 2, language=home_language)
    result = await hub.agent.ask(TurnRequest(utterance, source="wyoming"))
    assert result.language == expected, (utterance, result.language, result.reply)
