"""Talks to Home Assistant: REST for states and service calls, the websocket for registries and
events.

Where HA is: inside the add-on, the Supervisor proxies HA at `http://supervisor/core/api` and
`ws://supervisor/core/websocket` with `SUPERVISOR_TOKEN`; standalone, the options `ha_url` (for
example `http://homeassistant.local:8123`) and `ha_token` (a long-lived access token). An explicit
`ha_url` wins over the Supervisor.

Every failure becomes one of three exceptions with a message a user can act on: HAAuthError (the
token was refused), HAUnavailable (HA cannot be reached, or answers 5xx), HARequestError (HA
understood and said no: unknown service, bad data).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

import aiohttp

from hub.config import ConfigError

_LOGGER = logging.getLogger(__name__)

SUPERVISOR_REST_URL = "http://supervisor/core/api"
SUPERVISOR_WS_URL = "ws://supervisor/core/websocket"
REQUEST_TIMEOUT_S = 10.0
SERVICE_TIMEOUT_S = 30.0  # a service call waits for the action (a slow cover, a script)
COMMAND_TIMEOUT_S = 30.0
WS_MAX_MESSAGE_BYTES = 64 << 20  # registries of big homes are large single messages

EventCallback = Callable[[dict[str, Any]], Awaitable[None] | None]


class HAError(Exception):
    """Home Assistant could not do what was asked."""


class HAAuthError(HAError):
    """HA refused the access token (HTTP 401/403, websocket auth_invalid)."""


class HAUnavailable(HAError):
    """HA cannot be reached, timed out, or answered with a server error."""


class HARequestError(HAError):
    """HA rejected the request itself (unknown service or entity, invalid data)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status  # the HTTP status, when the REST API answered


@dataclass(frozen=True)
class HaOptions:
    ha_url: str | None
    ha_token: str | None = field(repr=False)
    expose: str
    include_entities: str | None
    exclude_entities: str | None


@dataclass(frozen=True)
class HAEndpoint:
    rest_url: str  # ends in /api
    ws_url: str
    token: str = field(repr=False)
    via_supervisor: bool = False

    @classmethod
    def from_options(cls, options: HaOptions, environ: dict[str, str] | None = None) -> "HAEndpoint | None":
        """Where HA is for these options, or None when the hub has no Home Assistant."""
        environ = dict(os.environ) if environ is None else environ
        if options.ha_url:
            if not options.ha_token:
                raise ConfigError("ha_url is set but ha_token is not: create a long-lived access token in "
                              "Home Assistant (your profile → Security) and set ha_token")
            return cls.from_url(options.ha_url, options.ha_token)
        if environ.get("SUPERVISOR_TOKEN"):
            return cls(SUPERVISOR_REST_URL, SUPERVISOR_WS_URL, environ["SUPERVISOR_TOKEN"], via_supervisor=True)
        return None

    @classmethod
    def from_url(cls, url: str, token: str) -> "HAEndpoint":
        base = url.strip().rstrip("/")
        if base.endswith("/api"):
            base = base[: -len("/api")]
        if not base.startswith(("http://", "https://")):
            raise ConfigError(f"ha_url must start with http:// or https://, not {url!r}")
        ws_base = "ws" + base[len("http"):]
        return cls(f"{base}/api", f"{ws_base}/api/websocket", token)

    @property
    def where(self) -> str:
        return "the Supervisor's Home Assistant proxy" if self.via_supervisor else self.rest_url[: -len("/api")]


class HAClient:
    """One HA endpoint; owns an aiohttp session unless given one."""

    def __init__(self, endpoint: HAEndpoint, session: aiohttp.ClientSession | None = None) -> None:
        self.endpoint = endpoint
        self._session = session
        self._owns_session = session is None

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession()
            self._owns_session = True
        return self._session

    async def close(self) -> None:
        if self._owns_session and self._session is not None:
            await self._session.close()
            self._session = None

    # --- REST ---------------------------------------------------------------------------

    async def get_states(self) -> list[dict[str, Any]]:
        states: list[dict[str, Any]] = await self._request("GET", "/states")
        return states

    async def get_state(self, entity_id: str) -> dict[str, Any]:
        state: dict[str, Any] = await self._request("GET", f"/states/{entity_id}")
        return state

    async def call_service(self, domain: str, service: str, data: dict[str, Any]) -> list[dict[str, Any]]:
        """Run a service; HA answers with the states that changed while it ran."""
        result = await self._request("POST", f"/services/{domain}/{service}", data, timeout=SERVICE_TIMEOUT_S)
        return result if isinstance(result, list) else []

    async def call_service_response(self, domain: str, service: str,
                                    data: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Run a service that answers with data (`?return_response`: `todo.get_items`,
        `calendar.get_events`, `weather.get_forecasts`): the states it changed, and its response."""
        result = await self._request("POST", f"/services/{domain}/{service}?return_response", data,
                                     timeout=SERVICE_TIMEOUT_S)
        result = result if isinstance(result, dict) else {}
        changed, response = result.get("changed_states"), result.get("service_response")
        return (changed if isinstance(changed, list) else [],
                response if isinstance(response, dict) else {})

    async def _request(self, method: str, path: str, body: Any = None, *, timeout: float = REQUEST_TIMEOUT_S) -> Any:
        url = self.endpoint.rest_url + path
        headers = {"Authorization": f"Bearer {self.endpoint.token}"}
        try:
            async with self.session.request(
                method, url, json=body, headers=headers, timeout=aiohttp.ClientTimeout(total=timeout)
            ) as response:
                if response.status in (401, 403):
                    raise HAAuthError(f"Home Assistant refused the access token (HTTP {response.status}) at {self.endpoint.where}")
                if response.status >= 500:
                    raise HAUnavailable(f"Home Assistant is unavailable (HTTP {response.status}) at {self.endpoint.where}")
                if response.status >= 400:
                    detail = (await response.text()).strip()[:300]
                    raise HARequestError(f"Home Assistant rejected {method} {path} (HTTP {response.status}): {detail}",
                                          response.status)
                if response.content_type != "application/json":
                    raise HAUnavailable(f"Home Assistant answered {method} {path} with {response.content_type}, not JSON")
                return await response.json()
        except asyncio.TimeoutError:
            raise HAUnavailable(f"Home Assistant did not answer within {timeout:.0f} s at {self.endpoint.where}") from None
        except aiohttp.ClientError as err:
            raise HAUnavailable(f"Home Assistant is unavailable at {self.endpoint.where}: {_reason(err)}") from None

    # --- websocket ----------------------------------------------------------------------

    async def connect_websocket(self) -> "HAWebSocket":
        """An authenticated websocket; raises HAAuthError / HAUnavailable."""
        try:
            ws = await self.session.ws_connect(
                self.endpoint.ws_url, timeout=aiohttp.ClientWSTimeout(ws_close=REQUEST_TIMEOUT_S),
                heartbeat=30, max_msg_size=WS_MAX_MESSAGE_BYTES,
            )
        except aiohttp.WSServerHandshakeError as err:
            if err.status in (401, 403):
                raise HAAuthError(f"Home Assistant refused the access token (HTTP {err.status}) at {self.endpoint.where}") from None
            raise HAUnavailable(f"Home Assistant's websocket is unavailable at {self.endpoint.where}: {_reason(err)}") from None
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as err:
            raise HAUnavailable(f"Home Assistant is unavailable at {self.endpoint.where}: {_reason(err)}") from None
        connection = HAWebSocket(ws, self.endpoint)
        try:
            await connection.authenticate()
        except BaseException:
            await connection.close()
            raise
        return connection


class HAWebSocket:
    """An authenticated HA websocket: commands with results, event subscriptions.

    A reader task routes results to their commands and events to their callbacks. When the
    connection drops, pending commands fail with HAUnavailable and `closed` completes.
    """

    def __init__(self, ws: aiohttp.ClientWebSocketResponse, endpoint: HAEndpoint) -> None:
        self._ws = ws
        self._endpoint = endpoint
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._subscriptions: dict[int, EventCallback] = {}
        self._reader: asyncio.Task[None] | None = None
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.ha_version: str | None = None

    async def authenticate(self) -> None:
        try:
            async with asyncio.timeout(REQUEST_TIMEOUT_S):
                hello = await self._ws.receive_json()
                if hello.get("type") != "auth_required":
                    raise HAUnavailable(f"unexpected first websocket message from Home Assistant: {hello.get('type')!r}")
                await self._ws.send_json({"type": "auth", "access_token": self._endpoint.token})
                answer = await self._ws.receive_json()
        except asyncio.TimeoutError:
            raise HAUnavailable("Home Assistant's websocket did not answer the authentication in time") from None
        except (TypeError, ValueError, aiohttp.ClientError) as err:  # closed or not JSON
            raise HAUnavailable(f"Home Assistant's websocket closed during authentication: {_reason(err)}") from None
        if answer.get("type") == "auth_invalid":
            raise HAAuthError(f"Home Assistant refused the access token: {answer.get('message', 'auth_invalid')}")
        if answer.get("type") != "auth_ok":
            raise HAUnavailable(f"unexpected websocket authentication answer: {answer.get('type')!r}")
        self.ha_version = answer.get("ha_version")
        self._reader = asyncio.create_task(self._read(), name="ha websocket reader")

    async def command(self, command: str, timeout: float = COMMAND_TIMEOUT_S, **fields: Any) -> Any:
        if self.closed.done():
            raise HAUnavailable("the connection to Home Assistant is closed")
        message_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[message_id] = future
        try:
            await self._ws.send_json({"id": message_id, "type": command, **fields})
            async with asyncio.timeout(timeout):
                return await future
        except asyncio.TimeoutError:
            raise HAUnavailable(f"Home Assistant did not answer {command} within {timeout:.0f} s") from None
        except (ConnectionError, aiohttp.ClientError, RuntimeError) as err:
            raise HAUnavailable(f"the connection to Home Assistant broke: {_reason(err)}") from None
        finally:
            self._pending.pop(message_id, None)

    async def subscribe_events(self, event_type: str, callback: EventCallback) -> None:
        """Call `callback(event)` for every `event_type` event (event = {event_type, data, ...})."""
        message_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[message_id] = future
        self._subscriptions[message_id] = callback  # before sending: events may follow the result at once
        try:
            await self._ws.send_json({"id": message_id, "type": "subscribe_events", "event_type": event_type})
            async with asyncio.timeout(COMMAND_TIMEOUT_S):
                await future
        except BaseException:
            self._subscriptions.pop(message_id, None)
            raise
        finally:
            self._pending.pop(message_id, None)

    async def close(self) -> None:
        await self._ws.close()
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)
        self._finish("closed")

    async def _read(self) -> None:
        reason = "Home Assistant closed the connection"
        try:
            async for message in self._ws:
                if message.type != aiohttp.WSMsgType.TEXT:
                    if message.type == aiohttp.WSMsgType.ERROR:
                        reason = f"websocket error: {self._ws.exception()}"
                    continue
                try:
                    payload = message.json()
                except ValueError:
                    _LOGGER.warning("ignoring a websocket message from Home Assistant that is not JSON")
                    continue
                for item in payload if isinstance(payload, list) else [payload]:  # HA may coalesce messages
                    await self._dispatch(item)
        except Exception as err:  # never let the reader die silently
            reason = f"websocket reader failed: {_reason(err)}"
            _LOGGER.exception("Home Assistant websocket reader failed")
        finally:
            self._finish(reason)

    async def _dispatch(self, item: Any) -> None:
        message_id = item.get("id") if isinstance(item, dict) else None
        if not isinstance(message_id, int):  # results and events answer one of our requests
            return
        kind = item.get("type")
        if kind == "result":
            future = self._pending.get(message_id)
            if future is None or future.done():
                return
            if item.get("success"):
                future.set_result(item.get("result"))
            else:
                error = item.get("error") or {}
                future.set_exception(HARequestError(f"Home Assistant: {error.get('code', 'error')}: {error.get('message', '')}".rstrip(": ")))
        elif kind == "event":
            callback = self._subscriptions.get(message_id)
            if callback is None:
                return
            try:
                result = callback(item.get("event") or {})
                if asyncio.iscoroutine(result):
                    await result
            except Exception:
                _LOGGER.exception("handling a Home Assistant event failed")

    def _finish(self, reason: str) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(HAUnavailable(f"the connection to Home Assistant was lost ({reason})"))
        if not self.closed.done():
            self.closed.set_result(None)
            _LOGGER.debug("Home Assistant websocket closed: %s", reason)


def _reason(err: BaseException) -> str:
    text = str(err).strip()
    return text or type(err).__name__
