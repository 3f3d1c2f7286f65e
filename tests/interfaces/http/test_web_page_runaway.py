"""Runaway output ends on the web page itself (issue 16: "Le Grand Garou, le Grand Garou, …" for
256 tokens, past `max_reply_chars`): the real page in headless Chromium asks a hub whose model
never stops repeating itself; what the page shows is within `max_reply_chars`, the loop said once."""

from __future__ import annotations

from typing import Iterator

import pytest

from helpers.live_hub import TOKEN, LiveHub
from helpers.scripted_engine import LOOPS, LoopingEngine
from interfaces.http.test_web_page import CHROMEDRIVER, CHROMIUM, browser  # noqa: F401 (the browser fixture)

pytestmark = [pytest.mark.skipif(not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
                                 reason="needs Debian's chromium and chromium-driver"),
              pytest.mark.timeout(180)]

MAX_REPLY = 120


@pytest.fixture(scope="module")
def looping_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveHub, LoopingEngine]]:
    engine = LoopingEngine()
    hub = LiveHub(tmp_path_factory.mktemp("looping-hub"), engine=engine, max_reply_chars=MAX_REPLY,
                  fast_path=False).start()
    yield hub, engine
    hub.stop()


@pytest.mark.parametrize("loop", sorted(LOOPS))
def test_the_page_shows_a_loop_once_and_within_the_limit(looping_hub, browser, loop):  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as seen
    from selenium.webdriver.support.ui import WebDriverWait

    hub, engine = looping_hub
    engine.loop = LOOPS[loop]
    wait = WebDriverWait(browser, 60)
    browser.get(hub.url + "/")
    browser.execute_script(f"localStorage.setItem('boltHubToken', '{TOKEN}')")
    browser.get(hub.url + "/")
    wait.until(seen.text_to_be_present_in_element((By.ID, "hub-state"), "ready"))
    browser.find_element(By.ID, "ask-text").send_keys("What is the capital of France?")
    browser.find_element(By.ID, "send").click()
    wait.until(seen.presence_of_element_located((By.CSS_SELECTOR, '[data-role="timings"]')))
    reply = browser.find_element(By.CSS_SELECTOR, '[data-role="reply"]').text.strip()
    assert reply and len(reply) <= MAX_REPLY, reply
    assert reply.count("Garou") <= 1 and reply.count("sword") <= 1, reply
    assert max(engine.read) < 50, f"the hub kept reading the loop: {engine.read}"
