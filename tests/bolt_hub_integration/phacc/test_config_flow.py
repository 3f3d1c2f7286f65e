"""Adding a hub: typed URL, the add-on's discovery, zeroconf; each error in its own words; re-auth,
options, reload and unload."""

from __future__ import annotations

import socket
from unittest.mock import patch

from pytest_homeassistant_custom_component.common import MockConfigEntry

from homeassistant import config_entries
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers.service_info.hassio import HassioServiceInfo
from homeassistant.helpers.service_info.zeroconf import ZeroconfServiceInfo

from custom_components.bolt_hub.const import (
    CONF_API_TOKEN, CONF_PERSONA, CONF_SATELLITE_TIMERS, CONF_TIMEOUT, CONF_URL, DOMAIN,
)

from .conftest import agent_id
from .fake_hub import TOKEN, FakeHub


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def start_user_flow(hass: HomeAssistant, url: str, token: str = TOKEN) -> dict:
    flow = await hass.config_entries.flow.async_init(DOMAIN, context={"source": config_entries.SOURCE_USER})
    assert flow["type"] is FlowResultType.FORM and flow["step_id"] == "user"
    return await hass.config_entries.flow.async_configure(flow["flow_id"], {CONF_URL: url, CONF_API_TOKEN: token})


async def test_a_typed_url_and_token_add_the_hub(hass: HomeAssistant, hub: FakeHub) -> None:
    result = await start_user_flow(hass, hub.url.removeprefix("http://") + "/")
    assert result["type"] is FlowResultType.CREATE_ENTRY, result
    assert result["title"] == "Bolt Hub" and result["data"] == {CONF_URL: hub.url, CONF_API_TOKEN: TOKEN}
    await hass.async_block_till_done()
    entry = hass.config_entries.async_entries(DOMAIN)[0]
    assert entry.state is config_entries.ConfigEntryState.LOADED
    assert agent_id(hass, entry).startswith("conversation.")


async def test_each_problem_has_its_own_error_and_adds_nothing(hass: HomeAssistant, hub: FakeHub) -> None:
    nowhere = f"http://127.0.0.1:{free_port()}"
    assert (await start_user_flow(hass, nowhere))["errors"] == {"base": "unreachable"}
    assert (await start_user_flow(hass, hub.url, "wrong"))["errors"] == {"base": "invalid_auth"}
    assert (await start_user_flow(hass, "http://"))["errors"] == {CONF_URL: "invalid_url"}
    hub.version = "0.5.9"
    old = await start_user_flow(hass, hub.url)
    assert old["errors"] == {"base": "unsupported_version"}
    assert old["description_placeholders"] == {"minimum": "0.6.0", "version": "0.5.9"}
    hub.version = "not a version"
    assert (await start_user_flow(hass, hub.url))["errors"] == {"base": "unsupported_version"}
    assert hass.config_entries.async_entries(DOMAIN) == []


async def test_something_else_at_the_url_is_not_a_hub(hass: HomeAssistant, aiohttp_server, socket_enabled) -> None:
    from aiohttp import web

    async def router_page(request: web.Request) -> web.Response:
        return web.Response(text="<html>router</html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/health", router_page)
    server = await aiohttp_server(app)
    result = await start_user_flow(hass, f"http://127.0.0.1:{server.port}")
    assert result["errors"] == {"base": "not_a_hub"}


async def test_the_same_hub_twice_is_refused(hass: HomeAssistant, hub: FakeHub) -> None:
    assert (await start_user_flow(hass, hub.url))["type"] is FlowResultType.CREATE_ENTRY
    again = await start_user_flow(hass, hub.url)
    assert again["type"] is FlowResultType.ABORT and again["reason"] == "already_configured"


def addon_discovery(hub: FakeHub, token: str = TOKEN) -> HassioServiceInfo:
    return HassioServiceInfo(config={"url": hub.url, "api_token": token, "version": "0.6.0"},
                             name="Bolt Hub", slug="local_bolt_hub", uuid="1234")


async def test_the_addon_is_added_with_its_own_token(hass: HomeAssistant, hub: FakeHub) -> None:
    flow = await hass.config_entries.flow.async_init(DOMAIN, context={"source": config_entries.SOURCE_HASSIO},
                                                     data=addon_discovery(hub))
    assert flow["type"] is FlowResultType.FORM and flow["step_id"] == "hassio_confirm"
    assert flow["description_placeholders"]["addon"] == "Bolt Hub"
    result = await hass.config_entries.flow.async_configure(flow["flow_id"], {})
    assert result["type"] is FlowResultType.CREATE_ENTRY and result["data"][CONF_API_TOKEN] == TOKEN
    await hass.async_block_till_done()
    # the add-on announces a new token (its api_token option changed): the entry follows it
    hub.token = "new-token"
    again = await hass.config_entries.flow.async_init(DOMAIN, context={"source": config_entries.SOURCE_HASSIO},
                                                      data=addon_discovery(hub, "new-token"))
    assert again["type"] is FlowResultType.ABORT and again["reason"] == "already_configured"
    await hass.async_block_till_done()
    [entry] = hass.config_entries.async_entries(DOMAIN)
    assert entry.data[CONF_API_TOKEN] == "new-token" and entry.state is config_entries.ConfigEntryState.LOADED


async def test_an_addon_whose_token_is_refused_says_so(hass: HomeAssistant, hub: FakeHub) -> None:
    flow = await hass.config_entries.flow.async_init(DOMAIN, context={"source": config_entries.SOURCE_HASSIO},
                                                     data=addon_discovery(hub, "stale"))
    result = await hass.config_entries.flow.async_configure(flow["flow_id"], {})
    assert result["type"] is FlowResultType.FORM and result["errors"] == {"base": "invalid_auth"}


def announced(hub: FakeHub, version: str = "0.6.0") -> ZeroconfServiceInfo:
    port = int(hub.url.rsplit(":", 1)[1])
    return ZeroconfServiceInfo(ip_address=__import__("ipaddress").ip_address("127.0.0.1"),
                               ip_addresses=[__import__("ipaddress").ip_address("127.0.0.1")], port=port,
                               hostname="bolt-hub-0242ac110002-8099.local.", type="_bolt-hub._tcp.local.",
                               name="bolt-hub-0242ac110002-8099._bolt-hub._tcp.local.",
                               properties={"name": "Upstairs hub", "version": version})


async def test_a_hub_found_by_zeroconf_asks_for_its_token(hass: HomeAssistant, hub: FakeHub) -> None:
    flow = await hass.config_entries.flow.async_init(DOMAIN, context={"source": config_entries.SOURCE_ZEROCONF},
                                                     data=announced(hub))
    assert flow["type"] is FlowResultType.FORM and flow["step_id"] == "zeroconf_confirm"
    assert flow["description_placeholders"]["url"] == hub.url
    wrong = await hass.config_entries.flow.async_configure(flow["flow_id"], {CONF_API_TOKEN: "wrong"})
    assert wrong["errors"] == {"base": "invalid_auth"}
    result = await hass.config_entries.flow.async_configure(flow["flow_id"], {CONF_API_TOKEN: TOKEN})
    assert result["type"] is FlowResultType.CREATE_ENTRY and result["title"] == "Upstairs hub"
    assert result["result"].unique_id == "bolt-hub-0242ac110002-8099"


async def test_an_old_hub_announced_is_not_offered(hass: HomeAssistant, hub: FakeHub) -> None:
    flow = await hass.config_entries.flow.async_init(DOMAIN, context={"source": config_entries.SOURCE_ZEROCONF},
                                                     data=announced(hub, "0.5.0"))
    assert flow["type"] is FlowResultType.ABORT and flow["reason"] == "unsupported_version"


async def test_a_refused_token_starts_reauth_and_a_new_one_reloads(hass: HomeAssistant, hub: FakeHub,
                                                                   entry: MockConfigEntry) -> None:
    hub.token = "rotated"
    await hass.config_entries.async_reload(entry.entry_id)
    await hass.async_block_till_done()
    assert entry.state is config_entries.ConfigEntryState.SETUP_ERROR
    [flow] = hass.config_entries.flow.async_progress_by_handler(DOMAIN)
    assert flow["context"]["source"] == config_entries.SOURCE_REAUTH
    result = await hass.config_entries.flow.async_configure(flow["flow_id"], {CONF_API_TOKEN: "rotated"})
    assert result["type"] is FlowResultType.ABORT and result["reason"] == "reauth_successful"
    await hass.async_block_till_done()
    assert entry.data[CONF_API_TOKEN] == "rotated" and entry.state is config_entries.ConfigEntryState.LOADED


async def test_options_offer_the_hubs_personas_and_reload_the_entry(hass: HomeAssistant, hub: FakeHub,
                                                                    entry: MockConfigEntry) -> None:
    flow = await hass.config_entries.options.async_init(entry.entry_id)
    schema = flow["data_schema"].schema
    persona = next(key for key in schema if key == CONF_PERSONA)
    assert schema[persona].config["options"] == ["home", "blacksmith"]
    with patch("custom_components.bolt_hub.async_setup_entry", wraps=__import__(
            "custom_components.bolt_hub", fromlist=["async_setup_entry"]).async_setup_entry) as setup:
        result = await hass.config_entries.options.async_configure(
            flow["flow_id"], {CONF_TIMEOUT: 20, CONF_PERSONA: "blacksmith", CONF_SATELLITE_TIMERS: False})
        await hass.async_block_till_done()
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert entry.options == {CONF_TIMEOUT: 20, CONF_PERSONA: "blacksmith", CONF_SATELLITE_TIMERS: False}
    assert setup.call_count == 1, "new options reload the entry"
    assert entry.runtime_data.client._timeout == 20


async def test_a_hub_that_is_down_at_setup_still_has_its_agent(hass: HomeAssistant, socket_enabled) -> None:
    entry = MockConfigEntry(domain=DOMAIN, data={CONF_URL: f"http://127.0.0.1:{free_port()}", CONF_API_TOKEN: TOKEN})
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    assert entry.state is config_entries.ConfigEntryState.LOADED and entry.runtime_data.version is None
    assert hass.states.get(agent_id(hass, entry)) is not None


async def test_unload_and_reload(hass: HomeAssistant, entry: MockConfigEntry) -> None:
    entity_id = agent_id(hass, entry)
    assert hass.states.get(entity_id) is not None
    assert await hass.config_entries.async_unload(entry.entry_id)
    await hass.async_block_till_done()
    assert entry.state is config_entries.ConfigEntryState.NOT_LOADED
    assert hass.states.get(entity_id).state == "unavailable"
    assert await hass.config_entries.async_reload(entry.entry_id)
    await hass.async_block_till_done()
    assert entry.state is config_entries.ConfigEntryState.LOADED
    assert hass.states.get(entity_id).state != "unavailable"
    assert er.async_get(hass).async_get(entity_id).config_entry_id == entry.entry_id
