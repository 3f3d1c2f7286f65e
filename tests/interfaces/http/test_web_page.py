"""The web page in a real headless Chromium (Debian's chromium + chromium-driver, driven by
selenium; nothing is downloaded): token prompt, a typed command, the streamed reply, the tool
call and the timeline, the entity table. Screenshots go to the test's tmp dir and test-output/."""

from __future__ import annotations

import io
import json
import shutil
import wave
from pathlib import Path
from typing import Iterator

import pytest
import requests

from helpers.live_hub import TOKEN, LiveHub
from hub.locales import phrase

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
OUTPUT = Path(__file__).resolve().parents[3] / "test-output"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1280,900",
         # a fake microphone (a test tone) that needs no permission prompt
         "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
         "--autoplay-policy=no-user-gesture-required")

pytestmark = pytest.mark.skipif(not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
                                reason="needs Debian's chromium and chromium-driver")


@pytest.fixture
def browser(tmp_path: Path) -> Iterator["webdriver.Chrome"]:
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path / 'profile'}")
    driver = webdriver.Chrome(options=options, service=Service(executable_path=str(CHROMEDRIVER)))
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def screenshot(driver, tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    assert driver.save_screenshot(str(path))
    OUTPUT.mkdir(exist_ok=True)
    shutil.copy(path, OUTPUT / name)
    return path


def test_page_runs_a_command_end_to_end(live_hub, browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as seen
    from selenium.webdriver.support.ui import WebDriverWait

    auth = {"Authorization": f"Bearer {TOKEN}"}
    lights = requests.get(f"{live_hub.url}/api/entities", params={"domain": "light"}, headers=auth, timeout=10).json()
    kitchen = next(e["entity_id"] for e in lights if (e["area"] or "").lower() == "kitchen")
    requests.post(f"{live_hub.url}/api/tools/turn_off", json={"arguments": {"entity_id": kitchen}},
                  headers=auth, timeout=30).raise_for_status()
    wait = WebDriverWait(browser, 60)

    browser.get(live_hub.url + "/")
    # no token yet: the page asks; a wrong one is refused and asked again
    wait.until(seen.visibility_of_element_located((By.ID, "token-input"))).send_keys("not-the-token")
    browser.find_element(By.ID, "token-save").click()
    wait.until(seen.visibility_of_element_located((By.ID, "token-error")))
    token_input = browser.find_element(By.ID, "token-input")
    token_input.clear()
    token_input.send_keys(TOKEN)
    browser.find_element(By.ID, "token-save").click()
    wait.until(seen.text_to_be_present_in_element((By.ID, "hub-state"), "ready"))
    assert browser.execute_script("return localStorage.getItem('boltHubToken')") == TOKEN
    wait.until(seen.presence_of_element_located((By.CSS_SELECTOR, f'tr[data-entity="{kitchen}"]')))

    browser.find_element(By.ID, "ask-text").send_keys("turn on the kitchen light")
    browser.find_element(By.ID, "send").click()

    tool = wait.until(seen.presence_of_element_located((By.CSS_SELECTOR, '.tool[data-tool="turn_on"][data-ok="true"]')))
    assert kitchen in tool.text
    wait.until(seen.presence_of_element_located((By.CSS_SELECTOR, '[data-role="timings"]')))
    reply = browser.find_element(By.CSS_SELECTOR, '[data-role="reply"]')
    assert reply.text.strip() and "pending" not in reply.get_attribute("class")
    assert "failed" not in reply.get_attribute("class")
    assert "total" in browser.find_element(By.CSS_SELECTOR, '[data-role="timings"]').text
    row = f'tr[data-entity="{kitchen}"] td:last-child'
    wait.until(seen.text_to_be_present_in_element((By.CSS_SELECTOR, row), "on"))
    assert browser.find_element(By.ID, "conversation-id").text.startswith("conversation ")

    # a model turn in the same conversation: streamed text and a timeline with model stages
    browser.find_element(By.ID, "ask-text").send_keys("Say hello.")
    browser.find_element(By.ID, "send").click()
    WebDriverWait(browser, 240).until(
        lambda driver: len(driver.find_elements(By.CSS_SELECTOR, '[data-role="timings"]')) == 2)
    second = browser.find_elements(By.CSS_SELECTOR, '[data-role="timings"]')[1].text
    assert second.startswith("model") and "tok evaluated" in second
    assert browser.find_elements(By.CSS_SELECTOR, ".bar .decode")
    assert browser.find_elements(By.CSS_SELECTOR, '[data-role="reply"]')[1].text.strip()
    shot = screenshot(browser, tmp_path, "web-page.png")
    assert shot.stat().st_size > 10_000  # a rendered page, not a blank one
    assert not [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"
                and "401" not in entry["message"]]  # the token prompt's 401s are expected


# --- speaking: the voice routes plugged in as a route hook -----------------------------------------


@pytest.fixture(scope="module")
def voice_hub(tmp_path_factory: pytest.TempPathFactory, smollm_path) -> Iterator[LiveHub]:
    """A hub with the voice routes but no speech-to-text server: each spoken turn fails at STT,
    which is enough to drive the page's recording, upload, streaming and error display."""
    hub = LiveHub(tmp_path_factory.mktemp("voice-hub"), voice=True, model_path=str(smollm_path)).start()
    yield hub
    hub.stop()


def tone_wav(seconds: float = 0.5, rate: int = 16000) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(b"\x00\x10" * int(seconds * rate))
    return buffer.getvalue()


def test_voice_routes_sit_behind_the_token_and_are_documented(voice_hub):
    auth = {"Authorization": f"Bearer {TOKEN}"}
    status = requests.get(f"{voice_hub.url}/api/status", headers=auth, timeout=10).json()
    assert {"method": "POST", "path": "/api/voice"} in status["speech"]["routes"]
    assert requests.post(f"{voice_hub.url}/api/voice", data=tone_wav(), timeout=10).status_code == 401
    document = requests.get(f"{voice_hub.url}/api/openapi.json", headers=auth, timeout=10).json()
    assert "post" in document["paths"]["/api/voice"] and "get" in document["paths"]["/api/voice/ws"]
    from openapi_spec_validator import validate as validate_openapi

    validate_openapi(document)
    response = requests.post(f"{voice_hub.url}/api/voice", data=tone_wav(), timeout=60,
                             headers={**auth, "Content-Type": "audio/wav"})
    events = [json.loads(line) for line in response.text.splitlines() if line.strip()]
    assert events[0]["type"] == "error" and events[0]["stage"] == "stt"
    assert events[-1]["type"] == "done" and events[-1]["ok"] is False


def test_page_speaks_through_the_microphone(voice_hub, browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as seen
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, 60)
    browser.get(voice_hub.url + "/")
    browser.execute_script("localStorage.setItem('boltHubToken', arguments[0])", TOKEN)
    browser.refresh()
    wait.until(seen.text_to_be_present_in_element((By.ID, "hub-state"), "ready"))
    mic = wait.until(seen.element_to_be_clickable((By.ID, "mic")))
    mic.click()
    wait.until(lambda driver: "recording" in mic.get_attribute("class"))
    browser.execute_script("return new Promise((done) => setTimeout(done, 800))")
    mic.click()
    error = wait.until(seen.presence_of_element_located((By.CSS_SELECTOR, '[data-role="voice-error"]')))
    # reaching speech-to-text means the hub read the page's WAV and found audio in it: a
    # malformed or empty recording is a 400 before any streaming
    assert error.text.startswith("stt:")
    wait.until(seen.presence_of_element_located((By.CSS_SELECTOR, '[data-role="timings"]')))
    reply = browser.find_element(By.CSS_SELECTOR, '[data-role="reply"]')
    assert reply.text.strip() == phrase("en", "error.speech_unavailable")
    assert "failed" in reply.get_attribute("class")
    timings = browser.find_element(By.CSS_SELECTOR, '[data-role="timings"]').text
    assert timings.startswith("voice (") and "total" in timings
    screenshot(browser, tmp_path, "web-page-voice.png")


# --- personas: the page offers them when there is more than one ------------------------------------

BLACKSMITH = Path(__file__).resolve().parents[3] / "examples" / "blacksmith" / "blacksmith.yaml"


@pytest.fixture(scope="module")
def persona_hub(tmp_path_factory: pytest.TempPathFactory, smollm_path) -> Iterator[LiveHub]:
    hub = LiveHub(tmp_path_factory.mktemp("persona-hub"), model_path=str(smollm_path),
                  custom_file=str(BLACKSMITH)).start()
    yield hub
    hub.stop()


def test_page_talks_to_the_persona_picked(persona_hub, browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as seen
    from selenium.webdriver.support.ui import Select, WebDriverWait

    wait = WebDriverWait(browser, 60)
    browser.get(persona_hub.url + "/")
    browser.execute_script(f"localStorage.setItem('boltHubToken', '{TOKEN}')")
    browser.get(persona_hub.url + "/")
    picker = wait.until(seen.visibility_of_element_located((By.ID, "persona")))
    options = {o.get_attribute("value"): o.text for o in Select(picker).options}
    assert options == {"home": "Bolt", "blacksmith": "Brom the blacksmith"}
    assert Select(picker).first_selected_option.get_attribute("value") == "home"  # the default

    Select(picker).select_by_value("blacksmith")
    greeting = wait.until(seen.presence_of_element_located((By.CSS_SELECTOR, '[data-role="greeting"]')))
    assert greeting.text.startswith("Welcome to my forge")
    conversation = browser.find_element(By.ID, "conversation-id").text.removeprefix("conversation ")

    browser.find_element(By.ID, "ask-text").send_keys("Good day, smith.")
    browser.find_element(By.ID, "send").click()
    WebDriverWait(browser, 300).until(seen.presence_of_element_located((By.CSS_SELECTOR, '[data-role="timings"]')))
    history = requests.get(f"{persona_hub.url}/api/conversations/{conversation}",
                           headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10).json()
    assert history["persona"] == "blacksmith"
    said = [(m["role"], m["content"]) for m in history["messages"]]
    assert said[0] == ("assistant", greeting.text)  # the page asked in the greeted conversation
    assert any(role == "user" and "Good day, smith." in content for role, content in said)
    screenshot(browser, tmp_path, "web-page-persona.png")
