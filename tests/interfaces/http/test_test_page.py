"""The Test page in a real headless Chromium, on a desktop and at 390 px: a typed sentence's plan
(language and why, the path with intent and slots, the entities weighed, each call with the
policy's verdict) changes no device — real MQTT devices on a real mosquitto, read before and
after, and no command on the wire — and "Run it" does exactly what it showed."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Iterator

import pytest

from helpers.live_hub import TOKEN, LiveHub
from hub.backends.demo.mqtt_home import MqttDemoHome
from hub.core.messages import ToolCall
from hub.core.tools import ToolContext
from hub.transport.mqtt_client import BrokerSettings
from mqtt.mqtt_helpers import Mosquitto, Sniffer
from mqtt.test_plan_on_mqtt import device_states
from interfaces.http.test_web_page import CHROMIUM, CHROMEDRIVER, browser, screenshot  # noqa: F401 (fixture)
from interfaces.http.test_web_phone import OVERFLOW, PHONE, hub_state, wait

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300),
              pytest.mark.skipif(not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
                                 reason="needs Debian's chromium and chromium-driver")]


class MqttHub:
    def __init__(self, hub: LiveHub, demo: MqttDemoHome, port: int) -> None:
        self.hub, self.demo, self.port = hub, demo, port


@pytest.fixture(scope="module")
def mqtt_hub(tmp_path_factory: pytest.TempPathFactory, smollm_path: Path) -> Iterator[MqttHub]:
    """A hub (SmolLM2) whose home is the demo devices, each an MQTT device of its own on mosquitto."""
    broker = Mosquitto(tmp_path_factory.mktemp("mosquitto"))
    broker.start()
    hub = LiveHub(tmp_path_factory.mktemp("test-page"), model_path=str(smollm_path), mqtt_host="127.0.0.1",
                  mqtt_port=broker.port).start()
    demo = MqttDemoHome.on_broker(BrokerSettings("127.0.0.1", broker.port), travel_seconds=1.0)
    hub.run(demo.start)
    deadline = time.monotonic() + 30
    while hub.app.store.get("lock.front_door") is None or hub.app.store.get("light.kitchen_light") is None:
        assert time.monotonic() < deadline, "the hub did not discover the MQTT devices"
        time.sleep(0.1)
    yield MqttHub(hub, demo, broker.port)
    hub.run(demo.stop)
    hub.stop()
    broker.stop()


def plan_in_page(driver, text: str) -> None:
    from selenium.webdriver.common.by import By

    field = driver.find_element(By.ID, "plan-text")
    field.clear()
    field.send_keys(text)
    driver.find_element(By.ID, "plan-send").click()
    wait(driver, 120).until(lambda d: d.find_element(By.ID, "plan-send").text == "Test"
                            and text in d.execute_script("return currentPlan ? currentPlan.text : ''"))


def fact(driver, name: str) -> str:
    return driver.find_element("css selector", f'[data-fact="{name}"]').text


@pytest.mark.parametrize("size", [None, PHONE], ids=["desktop", "phone"])
def test_the_test_page_plans_without_acting_and_runs_it(size, mqtt_hub: MqttHub, browser, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    demo = mqtt_hub.demo
    sniffer = Sniffer(mqtt_hub.port, ["bolt_demo/#"])
    try:
        if size:
            browser.set_window_size(*size)
        browser.get(f"{mqtt_hub.hub.url}/?token={TOKEN}#test")
        wait(browser).until(lambda d: hub_state(d) == "ready")
        assert browser.find_element(By.ID, "test-view").is_displayed()
        assert not browser.find_element(By.ID, "chat-view").is_displayed()
        wait(browser).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#plan-area option")) > 1)
        before = device_states(demo)
        sniffer.clear()

        plan_in_page(browser, "turn on the kitchen light")
        [call] = browser.find_elements(By.CSS_SELECTOR, "#plan-calls .call")
        assert call.get_attribute("data-verdict") == "would_run" and "light.kitchen_light" in call.text
        assert "HassTurnOn" in fact(browser, "Path") and "name: kitchen light" in fact(browser, "Path")
        assert fact(browser, "Language").startswith("en")
        assert browser.find_elements(By.CSS_SELECTOR, '#plan-weighed li.best[data-entity="light.kitchen_light"]')
        kitchen_plan = browser.execute_script("return currentPlan.plan_id")

        browser.find_element(By.CSS_SELECTOR, '#plan-area option[value="Hallway"]').click()
        plan_in_page(browser, "unlock the front door")
        [held] = browser.find_elements(By.CSS_SELECTOR, "#plan-calls .call")
        assert held.get_attribute("data-verdict") == "would_ask" and "would ask for a yes" in held.text
        assert "Do you really want me to unlock Front Door?" in held.text
        assert "Hallway" in fact(browser, "Spoken")
        if size:
            overflow = browser.execute_script(OVERFLOW)
            assert overflow["page"] <= 0 and not overflow["wide"], overflow
        screenshot(browser, tmp_path, f"test-page-{'phone' if size else 'desktop'}.png")

        time.sleep(1.5)  # a command would have reached the devices by now
        assert device_states(demo) == before
        assert [t for t, _, _ in sniffer.messages if t.endswith(("/set", "/command"))] == []
        assert not mqtt_hub.hub.app.policy._pending

        # the kitchen plan, run from the page: the light goes on, and nothing else changes
        plan_in_page(browser, "turn on the kitchen light")
        assert browser.execute_script("return currentPlan.plan_id") != kitchen_plan
        browser.find_element(By.ID, "plan-run").click()
        wait(browser).until(lambda d: d.find_elements(By.CSS_SELECTOR, '[data-role="run-reply"]'))
        assert browser.find_element(By.CSS_SELECTOR, '[data-role="run-reply"]').text == "Turned on Kitchen Light."
        deadline = time.monotonic() + 10
        while not demo.device("kitchen_light").on:
            assert time.monotonic() < deadline, "the run did not reach the kitchen light"
            time.sleep(0.05)
        after = device_states(demo)
        assert {k for k in before if before[k] != after[k]} == {"kitchen_light"}
        assert not browser.find_element(By.ID, "plan-run").is_enabled()  # once
        assert mqtt_hub.hub.app.agent.conversations.ids() == []
    finally:
        sniffer.close()
        off = ToolCall("turn_off", {"entity_id": "light.kitchen_light"})  # the next size starts from off
        mqtt_hub.hub.run(lambda: mqtt_hub.hub.app.registry.call(off, ToolContext("reset")))
