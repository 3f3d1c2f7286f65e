"""Composition root: builds the hub's parts from the options, starts and stops them together."""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from hub.agent.agent import Agent
from hub.config import HubConfig
from hub.home.catalogue import build_home_tools
from hub.home.demo import load_demo_home
from hub.home.entities import EntityStore
from hub.home.fast_path import FastPath
from hub.home.ha_registry import HomeAssistantBackend
from hub.home.resolve import EntityResolver
from hub.home.tool_base import ToolRegistry
from hub.home.view import StoreHomeView
from hub.llm.llama_engine import LlamaEngine
from hub.llm.types import Engine
from hub.settings import RuntimeSettings

_LOGGER = logging.getLogger(__name__)


class Component(Protocol):
    async def start(self) -> None: ...
    async def stop(self) -> None: ...


class HubApp:
    """Everything one running hub is made of. `serve()` runs it until stopped."""

    def __init__(self, config: HubConfig, engine: Engine | None = None) -> None:
        self.config = config
        self.settings = RuntimeSettings(config, config.state_dir / "settings.json")
        self.store = EntityStore()
        self.resolver = EntityResolver(self.store)
        self.registry = ToolRegistry()
        for tool in build_home_tools(self.store, self.resolver):
            self.registry.register(tool)
        self._engine = engine
        self.agent: Agent | None = None
        self.components: list[Component] = []
        self._started: list[Component] = []

    @property
    def engine(self) -> Engine:
        assert self._engine is not None, "start() loads the engine"
        return self._engine

    @property
    def uses_demo_home(self) -> bool:
        return not self.config.ha_url and not self.config.in_addon and not self.config.mqtt_host

    async def start(self, *, interfaces: bool = True) -> None:
        """Load the model, fill the home, start the interfaces (Wyoming, MQTT, HTTP)."""
        if self._engine is None:
            self._engine = await asyncio.to_thread(LlamaEngine.from_config, self.config)
        fast_path = FastPath(self.store, self.registry, self.resolver)
        self.agent = Agent(
            engine=self._engine, registry=self.registry, settings=self.settings, config=self.config,
            home=StoreHomeView(self.store, self.resolver), fast_path=fast_path,
        )
        if HomeAssistantBackend.configured(self.config):
            home_assistant = HomeAssistantBackend(self.config, self.store)
            await home_assistant.start()  # waits a few seconds for the first load, then retries
            self._started.append(home_assistant)
        if self.uses_demo_home:
            _LOGGER.info("no Home Assistant or MQTT broker configured: using the demo home")
            load_demo_home(self.store)
        if self.config.fast_path:
            await fast_path.prepare(self.config.language)  # else the first request pays the load
        if interfaces:
            self.components = self._interfaces()
        for component in self.components:
            await component.start()
            self._started.append(component)

    async def stop(self) -> None:
        while self._started:
            component = self._started.pop()
            try:
                await component.stop()
            except Exception:
                _LOGGER.exception("stopping %s failed", type(component).__name__)
        if self._engine is not None:
            await self._engine.close()

    def _interfaces(self) -> list[Component]:
        from hub.interfaces.wyoming_server import WyomingServer

        assert self.agent is not None
        return [WyomingServer(self.agent, self.config, self.agent.languages)]
