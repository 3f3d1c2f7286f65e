"""The Names page in a real headless Chromium, on a desktop and at 390 px: every entity, area and
floor with its names and their origins, searchable; a name added on the page is understood at
once (the Test page plans on it), taken away again, and an entity untargeted and targeted again."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
import requests

from helpers.live_hub import TOKEN, LiveHub
from interfaces.http.test_web_page import CHROMIUM, CHROMEDRIVER, browser, screenshot  # noqa: F401 (fixture)
from interfaces.http.test_web_phone import OVERFLOW, PHONE, hub_state, wait

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300),
              pytest.mark.skipif(not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
                                 reason="needs Debian's chromium and chromium-driver")]
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory, smollm_path: Path) -> Iterator[LiveHub]:
    live = LiveHub(tmp_path_factory.mktemp("names-page"), model_path=str(smollm_path)).start()
    yield live
    live.stop()


def card(driver, target: str):
    return driver.find_element("css selector", f'.card[data-target="{target}"]')


def search(driver, text: str) -> None:
    field = driver.find_element("id", "names-search")
    field.clear()
    field.send_keys(text)


def planned(hub: LiveHub, text: str, language: str) -> list[str | None]:
    plan = requests.post(f"{hub.url}/api/plan", headers=AUTH, json={"text": text, "language": language},
                         timeout=240).json()
    return [c["entity_id"] for c in plan["calls"]]


@pytest.mark.parametrize("size", [None, PHONE], ids=["desktop", "phone"])
def test_the_names_page_adds_takes_away_and_untargets(size, hub: LiveHub, browser, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    if size:
        browser.set_window_size(*size)
    browser.get(f"{hub.url}/?token={TOKEN}#names")
    wait(browser).until(lambda d: hub_state(d) == "ready")
    wait(browser).until(lambda d: d.find_elements(By.CSS_SELECTOR, '.card[data-target="lock.front_door"]'))
    assert not browser.find_element(By.ID, "chat-view").is_displayed()
    desk = card(browser, "light.desk_lamp")
    origins = {c.get_attribute("data-name"): c.get_attribute("data-origin")
               for c in desk.find_elements(By.CSS_SELECTOR, ".chip")}
    assert origins["Desk Lamp"] == "home" and origins["Desk"] == "generated"
    kitchen = card(browser, "Kitchen")
    assert kitchen.find_element(By.CSS_SELECTOR, '.chip[data-name="Küche"]').get_attribute("data-origin") == "home_alias"

    search(browser, "front")
    wait(browser).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#names-entities .card")) == 1)
    front = card(browser, "lock.front_door")
    front.find_element(By.CSS_SELECTOR, ".add-name input").send_keys("Pumuckl")
    front.find_element(By.CSS_SELECTOR, ".add-name button").click()
    wait(browser).until(lambda d: d.find_elements(By.CSS_SELECTOR, '.card[data-target="lock.front_door"] '
                                                                   '.chip[data-name="Pumuckl"][data-origin="added"]'))
    assert planned(hub, "Schließe den Pumuckl auf", "de") == ["lock.front_door"]  # understood at once
    if size:
        overflow = browser.execute_script(OVERFLOW)
        assert overflow["page"] <= 0 and not overflow["wide"], overflow
    screenshot(browser, tmp_path, f"names-page-{'phone' if size else 'desktop'}.png")
    card(browser, "lock.front_door").find_element(
        By.CSS_SELECTOR, '.chip[data-name="Pumuckl"] [data-role="remove-name"]').click()
    wait(browser).until(lambda d: not d.find_elements(By.CSS_SELECTOR, '.chip[data-name="Pumuckl"]'))
    assert planned(hub, "Schließe den Pumuckl auf", "de") == []

    search(browser, "coffee")
    wait(browser).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#names-entities .card")) == 1)
    card(browser, "switch.coffee_maker").find_element(By.CSS_SELECTOR, '[data-role="targeted"]').click()
    wait(browser).until(lambda d: d.find_elements(
        By.CSS_SELECTOR, '.card[data-target="switch.coffee_maker"][data-targeted="false"]'))
    assert "switch.coffee_maker" not in planned(hub, "turn on the coffee maker", "en")
    card(browser, "switch.coffee_maker").find_element(By.CSS_SELECTOR, '[data-role="targeted"]').click()
    wait(browser).until(lambda d: d.find_elements(
        By.CSS_SELECTOR, '.card[data-target="switch.coffee_maker"][data-targeted="true"]'))
    assert planned(hub, "turn on the coffee maker", "en") == ["switch.coffee_maker"]
