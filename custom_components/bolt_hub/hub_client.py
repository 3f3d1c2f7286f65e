"""The hub's HTTP API as the integration uses it: its health and version, a turn (one JSON reply
or its server-sent events), its personas. Every failure is a `HubError` whose `key` names it
(the config flow's error and the spoken error share it)."""

from __future__ import annotations

from collections.abc import AsyncIterator
import json
from typing import Any

import aiohttp
from awesomeversion import AwesomeVersion, AwesomeVersionException

from .const import MIN_HUB_VERSION


class HubError(Exception):
    """The hub could not answer; `key` says why (a translation key)."""

    key = "failed"


class HubUnreachable(HubError):
    """Nothing answers at the URL (stopped, wrong address, network down)."""

    key = "unreachable"


class HubTimeout(HubError):
    """The hub did not answer in time."""

    key = "timeout"


class HubAuthFailed(HubError):
    """The hub refused the API token."""

    key = "invalid_auth"


class HubStarting(HubError):
    """The hub answers but is still loading its model."""

    key = "starting"


class NotAHub(HubError):
    """Something answers at the URL, but not a Bolt Hub."""

    key = "not_a_hub"


class UnsupportedVersion(HubError):
    """A Bolt Hub older than this integration speaks to."""

    key = "unsupported_version"

    def __init__(self, version: str) -> None:
        super().__init__(f"Bolt Hub {version} is older than {MIN_HUB_VERSION}")
        self.version = version


class BoltHubClient:
    """One hub's API at `url` with its token; `timeout` bounds a turn (seconds)."""

    def __init__(self, session: aiohttp.ClientSession, url: str, token: str, timeout: float) -> None:
        self.url = url.rstrip("/")
        self._session = session
        self._token = token
        self._timeout = timeout

    async def check(self) -> str:
        """The hub's version once it is a Bolt Hub this integration speaks to and it takes the
        token; raises the `HubError` that says what is wrong."""
        health = await self._json("GET", "/health", timeout=10)
        version = health.get("version") if isinstance(health, dict) else None
        if not isinstance(version, str) or health.get("status") not in ("ok", "warming"):
            raise NotAHub(f"{self.url}/health is not a Bolt Hub's")
        if not supported(version):
            raise UnsupportedVersion(version)
        await self.status()
        return version

    async def status(self) -> dict[str, Any]:
        """`GET /api/status`: version, model, entities, languages, settings."""
        return await self._json("GET", "/api/status", timeout=self._timeout)

    async def personas(self) -> list[dict[str, Any]]:
        """`GET /api/personas`: who the hub may speak as."""
        return await self._json("GET", "/api/personas", timeout=10)

    async def ask(self, body: dict[str, Any]) -> dict[str, Any]:
        """One turn, its whole result at once."""
        return await self._json("POST", "/api/ask", body, timeout=self._timeout)

    async def ask_streaming(self, body: dict[str, Any]) -> AsyncIterator[tuple[str, dict[str, Any]]]:
        """One turn's server-sent events as they come: ("chunk", {"text"}), ("tool_started", …),
        ("tool_finished", …), then ("done", the result)."""
        headers = {**self._headers, "Accept": "text/event-stream"}
        try:
            async with self._session.post(f"{self.url}/api/ask", json=body, headers=headers,
                                          timeout=aiohttp.ClientTimeout(total=self._timeout)) as response:
                await _raise_for_status(response)
                async for event in _server_sent_events(response.content):
                    yield event
        except TimeoutError as err:
            raise HubTimeout(f"no answer within {self._timeout:.0f} s") from err
        except aiohttp.ClientError as err:
            raise HubUnreachable(str(err) or type(err).__name__) from err
        except json.JSONDecodeError as err:
            raise HubError(f"an event that is not JSON: {err}") from err

    @property
    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._token}"}

    async def _json(self, method: str, path: str, body: Any = None, *, timeout: float) -> Any:
        try:
            async with self._session.request(method, f"{self.url}{path}", json=body, headers=self._headers,
                                             timeout=aiohttp.ClientTimeout(total=timeout)) as response:
                await _raise_for_status(response)
                return await response.json()
        except TimeoutError as err:
            raise HubTimeout(f"no answer within {timeout:.0f} s") from err
        except aiohttp.ContentTypeError as err:
            raise NotAHub(f"{self.url}{path} answered {err.message}") from err
        except (aiohttp.ClientError, json.JSONDecodeError) as err:
            raise HubUnreachable(str(err) or type(err).__name__) from err


def supported(version: str) -> bool:
    """Whether a hub of `version` speaks the API this integration needs."""
    try:
        return AwesomeVersion(version) >= AwesomeVersion(MIN_HUB_VERSION)
    except AwesomeVersionException:
        return False


async def _raise_for_status(response: aiohttp.ClientResponse) -> None:
    if response.status < 400:
        return
    try:
        error = await response.json()
    except (aiohttp.ClientError, json.JSONDecodeError, TimeoutError):
        error = None
    hub_shaped = isinstance(error, dict) and "error" in error  # the hub's {"error", "message"}
    detail = error.get("message") if hub_shaped else None
    message = f"HTTP {response.status}: {detail or response.reason}"
    if response.status == 401:
        raise HubAuthFailed(message)
    if hub_shaped and response.status == 503 and error.get("error") in ("warming", "starting"):
        raise HubStarting(message)
    if not hub_shaped and response.status in (502, 503, 504):  # a proxy before a hub that is down
        raise HubUnreachable(message)
    if not hub_shaped:
        raise NotAHub(message)
    raise HubError(message)


async def _server_sent_events(stream: aiohttp.StreamReader) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """(event name, JSON data) of a text/event-stream, in order."""
    name, data = "message", list[str]()
    async for raw in stream:
        line = raw.decode("utf-8").rstrip("\r\n")
        if not line:
            if data:
                yield name, json.loads("\n".join(data))
            name, data = "message", []
        elif line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())
