"""A real Home Assistant core for tests: install, configure, start on loopback, onboard, stop.

`HomeAssistantInstance` runs `hass -c <dir> --skip-pip` from the venv that
`scripts/install_ha.sh` builds (Python 3.13, HA 2025.4.4), with `http` bound to 127.0.0.1 on a
free port and a small home of template lights / switch / sensor / garage door backed by input helpers. After
start it creates the owner (onboarding), a long-lived token, areas and entity aliases.
Everything it writes goes to its own directory; HA's log is `<dir>/home-assistant.log` and its
console output `<dir>/hass-console.log` (both named in every failure message).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

REPO = Path(__file__).resolve().parents[2]
HA_VERSION = "2025.4.4"
HA_VENV = Path(os.environ.get("HA_VENV", REPO / ".cache" / "ha-venv"))
INSTALL_SCRIPT = REPO / "scripts" / "install_ha.sh"
START_TIMEOUT_S = 240.0
OWNER_PASSWORD = "bolt-hub-test-password"

# Area name → aliases; entity → (area, aliases). The home the HA tests expect.
AREAS: dict[str, list[str]] = {
    "Living Room": ["Lounge", "Wohnzimmer"],
    "Kitchen": ["Küche"],
    "Bedroom": [],
}
ENTITY_PLACEMENT: dict[str, tuple[str, list[str]]] = {
    "light.living_room_light": ("Living Room", ["Main lamp", "Wohnzimmerlampe"]),
    "light.kitchen_light": ("Kitchen", []),
    "light.bedroom_lamp": ("Bedroom", ["Nightlight"]),
    "switch.coffee_machine": ("Kitchen", ["Espresso maker"]),
    "sensor.living_room_temperature": ("Living Room", []),
    "cover.garage_door": ("Kitchen", []),  # a garage door: opening it needs a spoken yes
}

CONFIGURATION_YAML = """\
homeassistant:
  name: Bolt Test Home
  latitude: 52.52
  longitude: 13.40
  elevation: 34
  unit_system: metric
  time_zone: UTC
  currency: EUR
  country: DE
  language: en

http:
  server_host: 127.0.0.1
  server_port: {port}

logger:
  default: info
  logs:
    homeassistant.components.wyoming: debug
    homeassistant.components.conversation: debug

api:
config:
onboarding:
conversation:

input_boolean:
  living_room_light_power: {{name: Living room light power}}
  kitchen_light_power: {{name: Kitchen light power}}
  bedroom_lamp_power: {{name: Bedroom lamp power}}
  coffee_machine_power: {{name: Coffee machine power}}
  guest_mode: {{name: Guest mode}}
  garage_door_open: {{name: Garage door open}}

input_number:
  living_room_light_level: {{name: Living room light level, min: 0, max: 255, step: 1, initial: 128}}
  living_room_temperature: {{name: Living room temperature value, min: -20, max: 50, step: 0.5, initial: 21.5}}

light:
  - platform: template
    lights:
      living_room_light:
        unique_id: bolt_test_living_room_light
        friendly_name: Living Room Light
        value_template: "{{{{ is_state('input_boolean.living_room_light_power', 'on') }}}}"
        level_template: "{{{{ states('input_number.living_room_light_level') | int }}}}"
        turn_on: {{action: input_boolean.turn_on, target: {{entity_id: input_boolean.living_room_light_power}}}}
        turn_off: {{action: input_boolean.turn_off, target: {{entity_id: input_boolean.living_room_light_power}}}}
        set_level:
          - action: input_number.set_value
            target: {{entity_id: input_number.living_room_light_level}}
            data: {{value: "{{{{ brightness }}}}"}}
          - action: input_boolean.turn_on
            target: {{entity_id: input_boolean.living_room_light_power}}
      kitchen_light:
        unique_id: bolt_test_kitchen_light
        friendly_name: Kitchen Light
        value_template: "{{{{ is_state('input_boolean.kitchen_light_power', 'on') }}}}"
        turn_on: {{action: input_boolean.turn_on, target: {{entity_id: input_boolean.kitchen_light_power}}}}
        turn_off: {{action: input_boolean.turn_off, target: {{entity_id: input_boolean.kitchen_light_power}}}}
      bedroom_lamp:
        unique_id: bolt_test_bedroom_lamp
        friendly_name: Bedroom Lamp
        value_template: "{{{{ is_state('input_boolean.bedroom_lamp_power', 'on') }}}}"
        turn_on: {{action: input_boolean.turn_on, target: {{entity_id: input_boolean.bedroom_lamp_power}}}}
        turn_off: {{action: input_boolean.turn_off, target: {{entity_id: input_boolean.bedroom_lamp_power}}}}

switch:
  - platform: template
    switches:
      coffee_machine:
        unique_id: bolt_test_coffee_machine
        friendly_name: Coffee Machine
        value_template: "{{{{ is_state('input_boolean.coffee_machine_power', 'on') }}}}"
        turn_on: {{action: input_boolean.turn_on, target: {{entity_id: input_boolean.coffee_machine_power}}}}
        turn_off: {{action: input_boolean.turn_off, target: {{entity_id: input_boolean.coffee_machine_power}}}}

cover:
  - platform: template
    covers:
      garage_door:
        unique_id: bolt_test_garage_door
        friendly_name: Garage Door
        device_class: garage
        value_template: "{{{{ is_state('input_boolean.garage_door_open', 'on') }}}}"
        open_cover: {{action: input_boolean.turn_on, target: {{entity_id: input_boolean.garage_door_open}}}}
        close_cover: {{action: input_boolean.turn_off, target: {{entity_id: input_boolean.garage_door_open}}}}

template:
  - sensor:
      - name: Living Room Temperature
        unique_id: bolt_test_living_room_temperature
        device_class: temperature
        unit_of_measurement: "°C"
        state: "{{{{ states('input_number.living_room_temperature') }}}}"
"""


class HarnessError(RuntimeError):
    """Home Assistant could not be installed, started or set up; the message says where to look."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _die_with_parent() -> None:
    """In a child before exec: get SIGTERM when its parent thread ends, so no HA outlives a run."""
    import ctypes

    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


# Linux sends the parent-death signal when the *thread* that forked the child ends, so children
# are forked from one thread that lives as long as the test process.
_SPAWNER = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="ha-spawner")


def spawn(args: list[str], **kwargs: Any) -> subprocess.Popen:
    """Popen in its own session, killed (SIGTERM) if the test process dies."""
    return _SPAWNER.submit(
        subprocess.Popen, args, start_new_session=True, preexec_fn=_die_with_parent, **kwargs
    ).result()


def ensure_installed(timeout: float = 900.0) -> Path:
    """The `hass` executable, running scripts/install_ha.sh first when needed (idempotent)."""
    hass = HA_VENV / "bin" / "hass"
    stamp = HA_VENV / ".bolt-hub-installed"
    if hass.exists() and stamp.exists() and stamp.read_text().startswith(HA_VERSION + " "):
        return hass
    try:
        done = subprocess.run(
            ["bash", str(INSTALL_SCRIPT)], capture_output=True, text=True, timeout=timeout,
            env={**os.environ, "HA_VENV": str(HA_VENV), "HA_VERSION": HA_VERSION},
        )
    except subprocess.TimeoutExpired as err:
        raise HarnessError(f"{INSTALL_SCRIPT} did not finish within {timeout:.0f} s") from err
    if done.returncode != 0 or not hass.exists():
        raise HarnessError(f"{INSTALL_SCRIPT} failed (exit {done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    return hass


@dataclass
class HomeAssistantInstance:
    """One HA process with its own config directory. `start()` blocks until HA runs and is set up."""

    config_dir: Path
    port: int = field(default_factory=free_port)
    token: str = ""
    area_ids: dict[str, str] = field(default_factory=dict)  # area name → area_id
    start_seconds: float = 0.0  # last start: process launch → API answering with a token
    setup_seconds: float = 0.0  # first start only: onboarding, token, areas, aliases
    process: subprocess.Popen | None = None
    extra_config: str = ""  # more configuration.yaml (e.g. "demo:" for HA's demo integration)
    custom_components: tuple[Path, ...] = ()  # integration folders copied into <config>/custom_components

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.config_dir / "home-assistant.log"

    @property
    def console_path(self) -> Path:
        return self.config_dir / "hass-console.log"

    # --- process ------------------------------------------------------------------------

    def start(self, timeout: float = START_TIMEOUT_S) -> None:
        hass = ensure_installed()
        self.config_dir.mkdir(parents=True, exist_ok=True)
        (self.config_dir / "configuration.yaml").write_text(
            CONFIGURATION_YAML.format(port=self.port) + self.extra_config, encoding="utf-8")
        for folder in self.custom_components:  # as HACS installs one: the folder, copied
            shutil.copytree(folder, self.config_dir / "custom_components" / folder.name, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("__pycache__"))
        started = time.monotonic()
        console = open(self.console_path, "ab")
        self.process = spawn(
            [str(hass), "-c", str(self.config_dir), "--skip-pip", "--log-no-color", "--log-file", str(self.log_path)],
            stdout=console, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env={k: v for k, v in os.environ.items() if k not in ("SUPERVISOR_TOKEN", "PYTHONPATH")},
        )
        console.close()
        try:
            asyncio.run(self._wait_and_set_up(started, timeout))
        except BaseException:
            self.stop()
            raise

    def stop(self, timeout: float = 30.0) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)

    def restart(self) -> None:
        self.stop()
        self.start()

    def failure(self, what: str) -> HarnessError:
        return HarnessError(f"{what}\n--- last lines of {self.log_path} ---\n{_tail(self.log_path)}\n"
                            f"--- last lines of {self.console_path} ---\n{_tail(self.console_path)}")

    # --- setup --------------------------------------------------------------------------

    async def _wait_and_set_up(self, started: float, timeout: float) -> None:
        deadline = started + timeout
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=15)) as session:
            await self._wait_for_http(session, deadline)
            if not self.token:
                setup_started = time.monotonic()
                self.token = await self._onboard(session)
                await self._wait_running(session, deadline)
                await self._place_entities(deadline)
                self.setup_seconds = time.monotonic() - setup_started
            else:
                await self._wait_running(session, deadline)
        self.start_seconds = time.monotonic() - started

    async def _wait_for_http(self, session: aiohttp.ClientSession, deadline: float) -> None:
        while True:
            if self.process is None or self.process.poll() is not None:
                code = None if self.process is None else self.process.returncode
                raise self.failure(f"hass exited (code {code}) before its API came up")
            try:
                async with session.get(f"{self.url}/api/onboarding") as response:
                    if response.status in (200, 401):
                        return
            except (aiohttp.ClientError, asyncio.TimeoutError):
                pass
            if time.monotonic() > deadline:
                raise self.failure(f"HA's API did not answer on {self.url} in time")
            await asyncio.sleep(0.5)

    async def _onboard(self, session: aiohttp.ClientSession) -> str:
        """Owner user → auth code → access token → long-lived token (the core_config step is skipped)."""
        client_id = f"{self.url}/"
        user = {"client_id": client_id, "name": "Test Owner", "username": "owner",
                "password": OWNER_PASSWORD, "language": "en"}
        async with session.post(f"{self.url}/api/onboarding/users", json=user) as response:
            if response.status != 200:
                raise self.failure(f"onboarding the owner failed: HTTP {response.status} {await response.text()}")
            auth_code = (await response.json())["auth_code"]
        form = {"grant_type": "authorization_code", "code": auth_code, "client_id": client_id}
        async with session.post(f"{self.url}/auth/token", data=form) as response:
            if response.status != 200:
                raise self.failure(f"exchanging the auth code failed: HTTP {response.status} {await response.text()}")
            access_token = (await response.json())["access_token"]
        return await ws_command(self.url, access_token, "auth/long_lived_access_token",
                                client_name="bolt-hub tests", lifespan=365)

    async def _wait_running(self, session: aiohttp.ClientSession, deadline: float) -> None:
        headers = {"Authorization": f"Bearer {self.token}"}
        state = None
        while time.monotonic() < deadline:
            try:
                async with session.get(f"{self.url}/api/config", headers=headers) as response:
                    if response.status == 200:
                        state = (await response.json()).get("state")
                        if state == "RUNNING":
                            return
            except (aiohttp.ClientError, asyncio.TimeoutError):
                pass
            await asyncio.sleep(0.5)
        raise self.failure(f"HA did not reach RUNNING in time (last state {state})")

    async def _place_entities(self, deadline: float) -> None:
        """Areas with aliases, and entities placed in them with their aliases."""
        while True:
            states = {s["entity_id"] for s in await self.states()}
            missing = set(ENTITY_PLACEMENT) - states
            if not missing:
                break
            if time.monotonic() > deadline:
                raise self.failure(f"the test entities did not appear: {sorted(missing)}")
            await asyncio.sleep(0.5)
        existing = {a["name"]: a["area_id"] for a in await self.ws("config/area_registry/list")}
        for name, aliases in AREAS.items():  # onboarding already made Living Room, Kitchen, Bedroom
            if name in existing:
                area = await self.ws("config/area_registry/update", area_id=existing[name], aliases=aliases)
            else:
                area = await self.ws("config/area_registry/create", name=name, aliases=aliases)
            self.area_ids[name] = area["area_id"]
        for entity_id, (area, aliases) in ENTITY_PLACEMENT.items():
            await self.ws("config/entity_registry/update", entity_id=entity_id,
                          area_id=self.area_ids[area], aliases=aliases)

    # --- helpers for tests --------------------------------------------------------------

    async def ws(self, command: str, **fields: Any) -> Any:
        return await ws_command(self.url, self.token, command, **fields)

    async def states(self) -> list[dict[str, Any]]:
        return await self.rest("GET", "/api/states")

    async def state(self, entity_id: str) -> dict[str, Any]:
        return await self.rest("GET", f"/api/states/{entity_id}")

    async def call_service(self, domain: str, service: str, **data: Any) -> Any:
        return await self.rest("POST", f"/api/services/{domain}/{service}", data)

    async def rest(self, method: str, path: str, body: Any = None, timeout: float = 60.0) -> Any:
        headers = {"Authorization": f"Bearer {self.token}"}
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as session:
            async with session.request(method, f"{self.url}{path}", json=body, headers=headers) as response:
                if response.status >= 400:
                    raise HarnessError(f"{method} {path}: HTTP {response.status} {await response.text()}")
                return await response.json()

    async def wait_for_state(self, entity_id: str, state: str, timeout: float = 10.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            current = await self.state(entity_id)
            if current["state"] == state:
                return current
            if time.monotonic() > deadline:
                raise AssertionError(f"{entity_id} is {current['state']!r}, not {state!r}")
            await asyncio.sleep(0.1)


async def ws_authenticate(ws: aiohttp.ClientWebSocketResponse, token: str) -> None:
    """HA's websocket handshake: its greeting, then the token."""
    hello = await ws.receive_json()
    if hello.get("type") != "auth_required":
        raise HarnessError(f"unexpected websocket greeting: {hello}")
    await ws.send_json({"type": "auth", "access_token": token})
    auth = await ws.receive_json()
    if auth.get("type") != "auth_ok":
        raise HarnessError(f"websocket auth failed: {auth}")


async def ws_command(url: str, token: str, command: str, **fields: Any) -> Any:
    """Run one websocket command on its own connection and return its result."""
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as session:
        async with session.ws_connect(f"{url}/api/websocket") as ws:
            await ws_authenticate(ws, token)
            await ws.send_json({"id": 1, "type": command, **fields})
            while True:
                message = await ws.receive_json()
                if message.get("id") == 1 and message.get("type") == "result":
                    if not message.get("success"):
                        raise HarnessError(f"{command} failed: {message.get('error')}")
                    return message.get("result")


class TcpProxy:
    """Forwards a loopback port to HA's; `pause()` cuts every connection and refuses new ones.

    Lets a test take Home Assistant away (as a network outage or HA restart would) and bring it
    back within a second, without restarting the real HA.
    """

    def __init__(self, target_port: int, port: int | None = None) -> None:
        self.target_port = target_port
        self.port = port or free_port()
        self._server: asyncio.AbstractServer | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._connect, "127.0.0.1", self.port, reuse_address=True)

    async def pause(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()

    async def stop(self) -> None:
        await self.pause()

    async def _connect(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.transport.abort()
            return
        self._writers.update((writer, upstream_writer))
        await asyncio.gather(pipe(reader, upstream_writer), pipe(upstream_reader, writer), return_exceptions=True)
        for w in (writer, upstream_writer):
            self._writers.discard(w)
            w.transport.abort()


async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy one direction of a proxied connection until it ends, then close the other side."""
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    finally:
        writer.transport.abort()


def _tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return f"({path} not written)"


if __name__ == "__main__":  # manual use: python tests/ha/ha_harness.py [DIR] → runs HA until Ctrl-C
    import tempfile

    directory = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="ha-"))
    instance = HomeAssistantInstance(directory)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    instance.start()
    print(f"HA {HA_VERSION} at {instance.url} (start {instance.start_seconds:.1f} s, setup {instance.setup_seconds:.1f} s)")
    print(f"token: {instance.token}\nconfig: {directory}")
    try:
        signal.pause()
    finally:
        instance.stop()
