"""The model download on the web page, in a real headless Chromium, on a desktop and at 390 px: the
progress while the stand-in answers (a command sent from the page meanwhile), the switch once the
file is checked and loaded, and a failure's message with what to do (read from /health with the
token: without it, /health names no file); a state file found damaged at start is said too."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.hf_mirror import FILE, REPO, HfMirror, Served, mirror  # noqa: F401 (fixture)
from helpers.live_hub import TOKEN, LiveHub
from interfaces.http.test_web_page import CHROMIUM, CHROMEDRIVER, browser, screenshot  # noqa: F401 (fixture)
from interfaces.http.test_web_phone import OVERFLOW, PHONE, hub_state, wait

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300),
              pytest.mark.skipif(not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
                                 reason="needs Debian's chromium and chromium-driver")]


def label(driver) -> str:
    return driver.find_element("id", "download-label").text


@pytest.mark.parametrize("size", [None, PHONE], ids=["desktop", "phone"])
def test_the_page_shows_the_download_and_the_switch(size, tmp_path: Path, mirror: HfMirror, smollm_path: Path,
                                                    browser) -> None:
    from selenium.webdriver.common.by import By

    mirror.serve(REPO, FILE, Served(smollm_path, hold_after=30_000_000))
    hub = LiveHub(tmp_path, model_repo=REPO, model_file=FILE).start()
    try:
        if size:
            browser.set_window_size(*size)
        browser.get(f"{hub.url}/?token={TOKEN}")
        wait(browser).until(lambda d: hub_state(d) == "ready")
        wait(browser).until(lambda d: "MB of 98.4 MB" in label(d))
        assert f"Downloading {REPO}/{FILE}" in label(browser) and "the stand-in answers meanwhile" in label(browser)
        browser.find_element(By.ID, "ask-text").send_keys("turn on the kitchen light")
        browser.find_element(By.ID, "send").click()
        wait(browser, 120).until(lambda d: d.find_elements(By.CSS_SELECTOR, '.tool[data-ok="true"]'))
        if size:
            overflow = browser.execute_script(OVERFLOW)
            assert overflow["page"] <= 0 and not overflow["wide"], overflow
        screenshot(browser, tmp_path, f"download-{'phone' if size else 'desktop'}.png")
        mirror.release()
        wait(browser, 180).until(lambda d: "Switched to the downloaded model" in label(d))
        wait(browser).until(lambda d: "(stand-in)" not in d.find_element(By.ID, "model-name").text)
    finally:
        hub.stop()


def test_the_page_says_why_a_download_failed(tmp_path: Path, mirror: HfMirror, smollm_path: Path, browser) -> None:
    mirror.serve(REPO, FILE, Served(smollm_path, token="hf_secret"))
    (tmp_path / "names.json").write_text('{"version": 1, "untargeted": ["switch.coffee_maker"], "ent')
    hub = LiveHub(tmp_path, model_repo=REPO, model_file=FILE).start()
    try:
        browser.set_window_size(*PHONE)
        browser.get(f"{hub.url}/?token={TOKEN}")
        wait(browser).until(lambda d: "Model download failed" in label(d))
        text = label(browser)
        assert "hf_token" in text and "The stand-in keeps serving." in text
        assert "error" in browser.find_element("id", "download-label").get_attribute("class")
        wait(browser).until(lambda d: "Set aside" in d.find_element("id", "status").text)
        said = browser.find_element("id", "status").text
        assert "names.json: it is not the JSON the hub wrote" in said and "its untargeted list is kept whole" in said
        overflow = browser.execute_script(OVERFLOW)
        assert overflow["page"] <= 0 and not overflow["wide"], overflow
    finally:
        hub.stop()
