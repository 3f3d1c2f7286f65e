"""The hub's own sentence templates (`hub/locales/sentences/`) over the installed intents: what
HA's releases miss, said as HA's own test suite says it. Real hassil matcher, the real store,
registry, demo backend and timer service."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.home.test_fast_path_understanding import BigHome

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize("text, expected", [
    ("10分钟计时器", {"minutes": 10}),
    ("计时10分钟", {"minutes": 10}),
    ("设置我的计时器5分钟30秒", {"minutes": 5, "seconds": 30}),
    ("开始计时器1个小时15分30秒", {"hours": 1, "minutes": 15, "seconds": 30}),
    ("设置半分钟计时", {"seconds": 30}),
    ("设置计时器半个钟头", {"minutes": 30}),
])
async def test_chinese_timers_written_together(tmp_path: Path, text, expected) -> None:
    home = BigHome(tmp_path)
    await home.timers.start()
    try:
        outcome = await home.say(text, "zh")
    finally:
        await home.timers.stop()
    assert outcome is not None, text
    assert [(c.name, c.arguments) for c in outcome.calls] == [("start_timer", expected)]
    assert outcome.results[0].ok
    assert "计时器" in outcome.reply
