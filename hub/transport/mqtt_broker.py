"""Which MQTT broker: the `mqtt_*` options, else (in the add-on) the Supervisor's MQTT service."""

from __future__ import annotations

import asyncio
import json
import logging
import os
from dataclasses import dataclass, field

import aiohttp

_LOGGER = logging.getLogger(__name__)

SUPERVISOR_URL = "http://supervisor"


@dataclass(frozen=True)
class BrokerSettings:
    host: str
    port: int = 1883
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    tls: bool = False

    def describe(self) -> str:
        return f"{'mqtts' if self.tls else 'mqtt'}://{self.host}:{self.port}"



@dataclass(frozen=True)
class BrokerOptions:
    mqtt_host: str | None
    mqtt_port: int
    mqtt_username: str | None
    mqtt_password: str | None = field(repr=False)
    mqtt_tls: bool


async def broker_from_options(
    options: BrokerOptions, environ: dict[str, str] | None = None, supervisor_url: str = SUPERVISOR_URL
) -> BrokerSettings | None:
    """The broker to use: the `mqtt_*` options, else (in the add-on) the Supervisor's MQTT service.

    Returns None when neither names a broker (the caller may then start the embedded one).
    """
    if options.mqtt_host:
        return BrokerSettings(
            host=options.mqtt_host,
            port=options.mqtt_port,
            username=options.mqtt_username,
            password=options.mqtt_password,
            tls=options.mqtt_tls,
        )
    environ = dict(os.environ) if environ is None else environ
    token = environ.get("SUPERVISOR_TOKEN")
    if not token:
        return None
    return await _supervisor_mqtt_service(token, supervisor_url)


async def _supervisor_mqtt_service(token: str, supervisor_url: str) -> BrokerSettings | None:
    try:
        timeout = aiohttp.ClientTimeout(total=10)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            async with session.get(
                f"{supervisor_url}/services/mqtt", headers={"Authorization": f"Bearer {token}"}
            ) as response:
                if response.status != 200:
                    _LOGGER.info("no MQTT service from the Supervisor (HTTP %s)", response.status)
                    return None
                body = await response.json()
    except (aiohttp.ClientError, asyncio.TimeoutError, json.JSONDecodeError) as err:
        _LOGGER.warning("could not ask the Supervisor for the MQTT service: %s", err)
        return None
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, dict) or not data.get("host"):
        _LOGGER.warning("the Supervisor's MQTT service answer has no broker: %r", body)
        return None
    return BrokerSettings(
        host=str(data["host"]),
        port=int(data.get("port") or 1883),
        username=data.get("username") or None,
        password=data.get("password") or None,
        tls=bool(data.get("ssl")),
    )
