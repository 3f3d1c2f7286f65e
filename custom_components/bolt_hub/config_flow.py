"""Adding a Bolt Hub: the add-on's Supervisor discovery (address and token from the add-on), a hub
on another machine found by zeroconf (the token asked), or a URL and token typed in. Each is
checked against the hub before it is added: unreachable, not a Bolt Hub, too old, or a token it
refuses each get their own message. Options: the turn timeout, the persona, satellite timers."""

from __future__ import annotations

from ipaddress import IPv6Address, ip_address
from typing import Any
from urllib.parse import urlparse

import voluptuous as vol

from homeassistant.config_entries import ConfigEntry, ConfigFlow, ConfigFlowResult, OptionsFlow
from homeassistant.core import callback
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from homeassistant.helpers.selector import (
    NumberSelector, NumberSelectorConfig, NumberSelectorMode, SelectSelector, SelectSelectorConfig,
    SelectSelectorMode, TextSelector, TextSelectorConfig, TextSelectorType,
)
from homeassistant.helpers.service_info.hassio import HassioServiceInfo
from homeassistant.helpers.service_info.zeroconf import ZeroconfServiceInfo

from .const import (
    CONF_API_TOKEN, CONF_PERSONA, CONF_SATELLITE_TIMERS, CONF_TIMEOUT, CONF_URL, DEFAULT_SATELLITE_TIMERS,
    DEFAULT_TIMEOUT, DOMAIN, LOGGER, MIN_HUB_VERSION,
)
from .hub_client import BoltHubClient, HubError, UnsupportedVersion, supported

DEFAULT_NAME = "Bolt Hub"
TOKEN_SELECTOR = TextSelector(TextSelectorConfig(type=TextSelectorType.PASSWORD))
USER_SCHEMA = vol.Schema({
    vol.Required(CONF_URL): TextSelector(TextSelectorConfig(type=TextSelectorType.URL)),
    vol.Required(CONF_API_TOKEN): TOKEN_SELECTOR,
})
TOKEN_SCHEMA = vol.Schema({vol.Required(CONF_API_TOKEN): TOKEN_SELECTOR})


def normalized_url(text: str) -> str | None:
    """`http://host:port` from what was typed ("hub.local:8099", a trailing slash), or None."""
    text = text.strip()
    parsed = urlparse(text if "://" in text else f"http://{text}")
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        return None
    try:
        parsed.port  # noqa: B018  (raises ValueError for a port that is not a number)
    except ValueError:
        return None
    return f"{parsed.scheme}://{parsed.netloc}{parsed.path.rstrip('/')}"


class BoltHubConfigFlow(ConfigFlow, domain=DOMAIN):
    """Add a Bolt Hub."""

    VERSION = 1

    def __init__(self) -> None:
        self._url = ""
        self._token = ""
        self._name = DEFAULT_NAME
        self._placeholders: dict[str, str] = {"minimum": MIN_HUB_VERSION, "version": "?"}

    @staticmethod
    @callback
    def async_get_options_flow(config_entry: ConfigEntry) -> OptionsFlow:
        return BoltHubOptionsFlow()

    async def _check(self, url: str, token: str) -> dict[str, str]:
        """The form's errors when the hub at `url` will not take turns with `token` ({} when it will)."""
        client = BoltHubClient(async_get_clientsession(self.hass), url, token, DEFAULT_TIMEOUT)
        try:
            await client.check()
        except UnsupportedVersion as err:
            self._placeholders["version"] = err.version
            return {"base": err.key}
        except HubError as err:
            LOGGER.debug("Bolt Hub at %s: %s", url, err)
            return {"base": err.key}
        return {}

    def _entry(self) -> ConfigFlowResult:
        return self.async_create_entry(title=self._name, data={CONF_URL: self._url, CONF_API_TOKEN: self._token})

    async def async_step_user(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """A URL and token typed in."""
        errors: dict[str, str] = {}
        if user_input is not None:
            url = normalized_url(user_input[CONF_URL])
            if url is None:
                errors[CONF_URL] = "invalid_url"
            else:
                self._async_abort_entries_match({CONF_URL: url})
                self._url, self._token = url, user_input[CONF_API_TOKEN].strip()
                if not (errors := await self._check(self._url, self._token)):
                    return self._entry()
        return self.async_show_form(step_id="user", data_schema=self.add_suggested_values_to_schema(
            USER_SCHEMA, user_input), errors=errors, description_placeholders=self._placeholders)

    async def async_step_hassio(self, discovery_info: HassioServiceInfo) -> ConfigFlowResult:
        """The add-on's discovery: its address and token; a known add-on's entry follows them."""
        url = normalized_url(str(discovery_info.config.get(CONF_URL, "")))
        token = str(discovery_info.config.get(CONF_API_TOKEN, ""))
        if url is None or not token:
            return self.async_abort(reason="not_a_hub")
        await self.async_set_unique_id(discovery_info.slug)
        self._abort_if_unique_id_configured(updates={CONF_URL: url, CONF_API_TOKEN: token})
        self._url, self._token, self._name = url, token, discovery_info.name or DEFAULT_NAME
        self.context["title_placeholders"] = {"name": self._name}
        return await self.async_step_hassio_confirm()

    async def async_step_hassio_confirm(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        errors: dict[str, str] = {}
        if user_input is not None and not (errors := await self._check(self._url, self._token)):
            return self._entry()
        return self.async_show_form(step_id="hassio_confirm", errors=errors,
                                    description_placeholders={**self._placeholders, "addon": self._name})

    async def async_step_zeroconf(self, discovery_info: ZeroconfServiceInfo) -> ConfigFlowResult:
        """A hub on another machine, announced on the network: its address and version."""
        if discovery_info.port is None:
            return self.async_abort(reason="not_a_hub")
        version = discovery_info.properties.get("version", "")
        if not supported(version):
            return self.async_abort(reason="unsupported_version",
                                    description_placeholders={"version": version or "?", "minimum": MIN_HUB_VERSION})
        host = discovery_info.host
        address = f"[{host}]" if _is_ipv6(host) else host
        url = f"http://{address}:{discovery_info.port}"
        await self.async_set_unique_id(discovery_info.name.split(".", 1)[0])
        self._abort_if_unique_id_configured(updates={CONF_URL: url})
        self._async_abort_entries_match({CONF_URL: url})
        self._url, self._name = url, discovery_info.properties.get("name") or DEFAULT_NAME
        self.context["title_placeholders"] = {"name": self._name}
        return await self.async_step_zeroconf_confirm()

    async def async_step_zeroconf_confirm(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """The announced hub's token (its web page and log show it: never announced)."""
        errors: dict[str, str] = {}
        if user_input is not None:
            self._token = user_input[CONF_API_TOKEN].strip()
            if not (errors := await self._check(self._url, self._token)):
                return self._entry()
        return self.async_show_form(step_id="zeroconf_confirm", data_schema=TOKEN_SCHEMA, errors=errors,
                                    description_placeholders={**self._placeholders, "name": self._name,
                                                              "url": self._url})

    async def async_step_reauth(self, entry_data: dict[str, Any]) -> ConfigFlowResult:
        """The hub refused its token (a new one was set)."""
        return await self.async_step_reauth_confirm()

    async def async_step_reauth_confirm(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        entry = self._get_reauth_entry()
        errors: dict[str, str] = {}
        if user_input is not None:
            token = user_input[CONF_API_TOKEN].strip()
            if not (errors := await self._check(entry.data[CONF_URL], token)):
                return self.async_update_reload_and_abort(entry, data_updates={CONF_API_TOKEN: token})
        return self.async_show_form(step_id="reauth_confirm", data_schema=TOKEN_SCHEMA, errors=errors,
                                    description_placeholders={**self._placeholders, "url": entry.data[CONF_URL]})


class BoltHubOptionsFlow(OptionsFlow):
    """The turn timeout, the hub persona that answers, and HA's own timers on satellites."""

    async def async_step_init(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        if user_input is not None:
            return self.async_create_entry(data=user_input)
        options = self.config_entry.options
        schema = vol.Schema({
            vol.Required(CONF_TIMEOUT, default=options.get(CONF_TIMEOUT, DEFAULT_TIMEOUT)): NumberSelector(
                NumberSelectorConfig(min=5, max=300, step=1, unit_of_measurement="s", mode=NumberSelectorMode.BOX)),
            vol.Optional(CONF_PERSONA, description={"suggested_value": options.get(CONF_PERSONA)}): SelectSelector(
                SelectSelectorConfig(options=await self._personas(), custom_value=True,
                                     mode=SelectSelectorMode.DROPDOWN)),
            vol.Required(CONF_SATELLITE_TIMERS,
                         default=options.get(CONF_SATELLITE_TIMERS, DEFAULT_SATELLITE_TIMERS)): bool,
        })
        return self.async_show_form(step_id="init", data_schema=schema)

    async def _personas(self) -> list[str]:
        """The hub's personas (none offered while it does not answer: one can still be typed)."""
        try:
            personas = await self.config_entry.runtime_data.client.personas()
        except (HubError, AttributeError):
            return []
        return [str(p["key"]) for p in personas if isinstance(p, dict) and "key" in p]


def _is_ipv6(host: str) -> bool:
    try:
        return isinstance(ip_address(host), IPv6Address)
    except ValueError:
        return False
