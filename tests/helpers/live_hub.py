"""A real hub (HubApp, SmolLM2, demo home) with the REST API on a free loopback port, run in a
thread with its own event loop so sync clients (schemathesis, selenium) can use it too."""

from __future__ import annotations

import asyncio
import socket
import threading
from pathlib import Path
from typing import Any, Awaitable, Callable

from hub.app import HubApp
from hub.config import validate
from hub.interfaces.http.rest_api import RestApi
from hub.llm.types import Engine

TOKEN = "test-token-7f3a"


class LiveHub:
    def __init__(self, state_dir: Path, *, voice: bool = False, engine: Engine | None = None,
                 **options: Any) -> None:
        # a long turn timeout: CI machines with 2 busy cores make a model turn slow
        # the embedded MQTT broker (and its demo home) on a port no other test uses
        self.config = validate({"data_dir": str(state_dir), "api_token": TOKEN, "n_ctx": 4096,
                                "max_tokens": 24, "turn_timeout": 240, "mqtt_port": _free_port(),
                                "rate_limit_per_minute": 0,  # the tests flip one light often
                                **options})
        self.voice = voice  # add the voice routes (hub.interfaces.voice.http) as a route hook
        self.engine = engine  # None: the configured model
        self.app: HubApp | None = None
        self.api: RestApi | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=asyncio.run, args=(self._main(),), daemon=True,
                                        name="live-hub")

    @property
    def url(self) -> str:
        assert self.api is not None
        return f"http://127.0.0.1:{self.api.port}"

    def start(self, timeout: float = 120) -> "LiveHub":
        self._thread.start()
        if not self._ready.wait(timeout):
            raise TimeoutError("the hub did not start")
        if self._error is not None:
            raise self._error
        return self

    def stop(self, timeout: float = 60) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout)

    def run(self, make: Callable[[], Awaitable[Any]], timeout: float = 60) -> Any:
        """Run a coroutine on the hub's loop (to read or change hub state directly)."""
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(make(), self._loop).result(timeout)

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        try:
            self.app = HubApp(self.config, engine=self.engine)
            await self.app.start(listeners=False)
            hooks = []
            if self.voice:
                from hub.interfaces.voice.pipeline import VoicePipeline
                from hub.interfaces.voice.http import add_voice_routes

                pipeline = VoicePipeline.from_options(self.app.options.voice, self.app.agent)
                hooks.append(lambda app: add_voice_routes(app, pipeline))
            self.api = RestApi(self.app, self.app.options.http, host="127.0.0.1", port=0, route_hooks=hooks)
            await self.api.start()
        except BaseException as err:
            self._error = err
            self._ready.set()
            raise
        self._ready.set()
        try:
            await self._stop.wait()
        finally:
            await self.api.stop()
            await self.app.stop()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
