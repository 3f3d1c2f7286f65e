"""Composition root: builds the hub's parts from the options, starts and stops them together."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Awaitable, Callable, Protocol, TypeVar

from hub.agent.agent import Agent
from hub.agent.pending import ConfirmationHook
from hub.agent.personas import PersonaBook, home_persona
from hub.agent.prompt import ASSISTANT_INSTRUCTIONS
from hub.config import ConfigError, HubConfig
from hub.custom.loader import CustomSetup, ToolDeps, load_custom_file, parse_secrets
from hub.home.assist_tools import build_assist_tools
from hub.home.broadcast import Broadcast
from hub.home.catalogue import build_home_tools
from hub.backends.demo.home import DEMO_AREA_ALIASES, load_demo_home
from hub.backends.ha.announcer import SatelliteAnnouncer
from hub.home.entities import EntityStore
from hub.home.later import Later
from hub.home.local_lists import LocalLists
from hub.home.places import ConfiguredFloors, SpeakerPlaces, parse_area_floors, parse_satellites
from hub.home.name_book import NameBook
from hub.home.name_file import NAMES_FILE
from hub.understanding import template_cache
from hub.understanding.fast_path import FastPath
from hub.understanding.follow_ups import FollowUps
from hub.understanding.language import TextLanguages
from hub.understanding.warm_up import FastPathWarmUp
from hub.home.policy import ActionPolicy
from hub.backends.ha.registry import HomeAssistantBackend
from hub.home.resolve import EntityResolver
from hub.core.tools import ToolContext, ToolRegistry
from hub.agent.types import TurnRequest
from hub.home.view import StoreHomeView
from hub.interfaces.mqtt.reports import MqttAnnouncements, MqttReportPublisher
from hub.mqtt_stack import MqttStack
from hub.options import hub_options
from hub.llm.download_progress import DownloadProgress
from hub.llm.factory import create_engine, download_source, load_setup, local_engine
from hub.llm.model_source import load_failure, verified_file
from hub.llm.types import Engine
from hub.llm.upgrade import ModelUpgrade, load_failed
from hub.memory import MODEL_PARTS, MemoryReport, give_back, object_bytes, resident_bytes
from hub.settings import RuntimeSettings
from hub.transport.mqtt_client import MqttClient
from hub.startup import StartupProgress

if TYPE_CHECKING:
    from hub.interfaces.voice.pipeline import VoicePipeline
    from hub.interfaces.http.rest_api import RestApi

_LOGGER = logging.getLogger(__name__)
# Docker and the Supervisor SIGKILL 10 s after SIGTERM: the hub is gone well before that
SHUTDOWN_GRACE_S = 2.0  # running turns may still finish on their own
SHUTDOWN_S = 6.0  # everything, from the stop request to the last part stopped
TEMPLATES_FOLDER = "templates"
PRIMING_WAIT_S = 120.0  # the warm-up ends when the first prompt is primed, or after this
T = TypeVar("T")


class Component(Protocol):
    async def start(self) -> None: ...
    async def stop(self) -> None: ...


class HubApp:
    """Everything one running hub is made of. `serve()` runs it until stopped."""

    def __init__(self, config: HubConfig, engine: Engine | None = None) -> None:
        self.options = options = hub_options(config)  # each part gets its own
        self.settings = RuntimeSettings(options.settings, config.state_dir / "settings.json")
        template_cache.use(config.state_dir / TEMPLATES_FOLDER)  # each language's compiled templates
        self.store = EntityStore()
        self.names = NameBook(config.state_dir / NAMES_FILE, self.store)  # the user's names (Names page)
        self.store.set_overlay(self.names)
        self.resolver = EntityResolver(self.store)
        self.places = SpeakerPlaces(self.store, self.resolver, _option(parse_satellites, options.places.satellites))
        self.floors = ConfiguredFloors(self.store, _option(parse_area_floors, options.places.area_floors))
        self.registry = ToolRegistry()
        self.policy = ActionPolicy.from_options(options.policy)
        self.later = Later(options.later, self.store)  # timers, watches, slow actions, reports
        for tool in [*build_home_tools(self.store, self.resolver, self.policy, self.later.tracker),
                     *build_assist_tools(self.store, self.resolver, self.policy, self.later.tracker),
                     *self.later.tools()]:
            self.registry.register(tool)
        home_tools = self.registry.names()  # what the home persona may call
        self._tool_deps: ToolDeps | None = None  # the custom tools' MQTT and HA, from start()
        self.custom = self._load_custom()
        self.personas = self._persona_book(home_tools)
        self._engine = engine
        self.agent: Agent | None = None  # from start(): every interface gets it
        self.mqtt: MqttStack | None = None
        self.home_assistant: HomeAssistantBackend | None = None
        self.voice: "VoicePipeline | None" = None
        self.http: "RestApi | None" = None
        self.startup = StartupProgress()  # the warm-up the page, /health and the log show
        self.fast_path: FastPath | None = None  # from start()
        self.warm_up: FastPathWarmUp | None = None  # from start(): the fast path's languages
        self._started: list[Component] = []
        self._warming: asyncio.Task[None] | None = None
        self.upgrade: ModelUpgrade | None = None  # the configured model, downloading (hub.llm.upgrade)
        self._upgrading: asyncio.Task[None] | None = None
        self._retiring: asyncio.Task[None] | None = None
        self._retired: list[Engine] = []  # engines switched away from, closed once their turns ended

    @property
    def engine(self) -> Engine:
        assert self._engine is not None, "start() loads the engine"
        return self._engine

    async def start(self, *, listeners: bool = True) -> None:
        """Load the model, fill the home (HA, MQTT), start the listeners (Wyoming, HTTP).

        With neither Home Assistant nor a broker configured, MQTT runs on an embedded broker
        with a simulated demo home, so the hub works end to end with no setup. The HTTP API starts
        first, so that the page and `/health` show the warm-up while the model loads.
        """
        if listeners:
            self.http = self._http_api()
            await self._start(self.http)
        self.startup.advance("loading_model")
        if self._engine is None:
            self._engine = await create_engine(self.options.llm)  # local GGUF or a remote server
        self._plan_upgrade()
        self.fast_path = fast_path = FastPath(self.store, self.registry, self.resolver)
        self.agent = Agent(
            engine=self._engine, registry=self.registry, settings=self.settings, options=self.options.agent,
            home=StoreHomeView(self.store, self.resolver), fast_path=fast_path,
            confirmations=ConfirmationHook(self.policy, self.registry), personas=self.personas,
            identify=TextLanguages(), places=self.places,
            follow_ups=FollowUps(self.store, self.resolver, fast_path),
        )
        await self._start(self.agent)  # primes the stable prompt and conversations while idle
        self.later.reporter.connect_agent(self.agent)
        self.later.timers.run_commands(self._delayed_command)
        self.startup.advance("loading_home")
        await self._start_home_assistant()
        self.mqtt = MqttStack(self.options.mqtt, store=self.store, settings=self.settings, agent=self.agent)
        await self._start(self.mqtt)
        if self.mqtt.client is not None:
            self._publish_on_mqtt(self.mqtt.client, self.mqtt.topics.base)
        if self._tool_deps is not None:
            self._tool_deps.connect(mqtt=self.mqtt.client,
                                    home_assistant=self.home_assistant.client if self.home_assistant else None)
        if self.mqtt.demo is not None:
            _LOGGER.info("no Home Assistant or MQTT broker configured: using the MQTT demo home")
            for area, aliases in DEMO_AREA_ALIASES.items():
                self.store.set_area_aliases(area, aliases)
            await _settled(self.store)
        elif not HomeAssistantBackend.configured(self.options.home_assistant) and not self.mqtt.enabled:
            _LOGGER.info("no home to control could be reached: using the in-memory demo home")
            load_demo_home(self.store)
        self.startup.advance("preparing")
        await self._start(self.later)  # after MQTT, so timers overdue at start reach it
        if self.options.agent.fast_path:  # else a language's first command pays for loading it
            self.warm_up = FastPathWarmUp(fast_path, self.store, self.options.agent.language,
                                          last_turn=self.agent.activity.last_active)
            await self._start(self.warm_up)  # the configured and the home's languages; the rest in the background
        if listeners:
            from hub.interfaces.wyoming.server import WyomingServer

            assert self.voice is not None and self.http is not None
            self.voice.agent = self.agent
            await self._start(WyomingServer(self.agent, self.options.wyoming, self.agent.languages, settings=self.settings))
            self.http.attach()
            await self.http.announce()
        self.startup.advance("priming")
        self._warming = asyncio.create_task(self._primed(), name="warm-up")
        if self.upgrade is not None:
            self._upgrading = asyncio.create_task(self._upgraded(self.upgrade), name="model-download")

    def memory(self, objects: bool = True) -> MemoryReport:
        """What the hub's resident memory is made of (`hub.memory`): the model's parts, and with
        `objects` the home and the fast path's languages (a walk of the hub's objects: a second
        or two; call it in a thread); the rest."""
        resident, model, counted = resident_bytes(), self.engine.memory(), set[int]()  # before the walk's own
        parts = {part: model.get(part, 0) for part in MODEL_PARTS}
        languages: dict[str, int] = {}
        if objects:
            parts["home"] = object_bytes([self.store, self.resolver, self.names, self.places], counted)
            languages = self.fast_path.memory(counted) if self.fast_path is not None else {}
            parts["home"] += languages.pop("home", 0)
            parts["fast_path"] = sum(languages.values())
            del counted
            give_back()  # the walk's bookkeeping (tens of MiB)
        prepared = {code: "full" if code in self.warm_up.full else "compact"
                    for code in self.warm_up.prepared} if self.warm_up is not None else {}
        return MemoryReport(resident, parts, {"fast_path": languages,
                                              "rest": {"compute_buffers_allocated": model.get("compute", 0)}}, prepared)

    async def _delayed_command(self, text: str, ctx: ToolContext) -> str:
        """A delayed command when its timer ends ("turn off the lights in 10 minutes"): as HA
        runs one, a new conversation of the same device, area, language (and persona, client),
        through the agent so the policy holds then."""
        assert self.agent is not None
        result = await self.agent.ask(TurnRequest(
            text, language=ctx.language, source=ctx.source, satellite_id=ctx.satellite_id, device_id=ctx.device_id,
            area=ctx.area, persona=ctx.persona, client=ctx.client))
        return result.reply

    async def _start_home_assistant(self) -> None:
        """Home Assistant when configured (waits briefly for a first load); else the to-do and
        shopping lists the hub keeps itself."""
        if HomeAssistantBackend.configured(self.options.home_assistant):
            self.home_assistant = HomeAssistantBackend(self.options.home_assistant, self.store)
            await self._start(self.home_assistant)
            self.later.add_announcer(SatelliteAnnouncer(self.home_assistant.client))
        else:
            await self._start(LocalLists.from_options(self.options.lists, self.store))

    def _publish_on_mqtt(self, client: MqttClient, base: str) -> None:
        """Reports on `<base>/report`; a broadcast in a home with no satellite entity on `<base>/announce`."""
        self.later.reporter.add_sink(MqttReportPublisher(client, base))
        broadcast = self.registry.get("broadcast")
        if isinstance(broadcast, Broadcast):
            broadcast.add_outlet(MqttAnnouncements(client, base))

    def _plan_upgrade(self) -> None:
        """With `model_repo` and its file not yet downloaded, the engine is the stand-in: the
        file is fetched in the background, and the hub switches to it (`_switch_engine`). A
        downloaded file that did not load keeps the stand-in, and `/health` says why."""
        options = self.options.llm
        source = download_source(options)
        if source is None:
            return
        if verified_file(source) is not None:
            if (error := load_failure(source, load_setup(options))) is not None:
                failed = DownloadProgress(source)
                failed.failed(load_failed(source, error))
                self.startup.download = failed.as_dict
            return
        self.upgrade = ModelUpgrade(source, lambda path: local_engine(options, path), self._switch_engine,
                                    setup=load_setup(options))
        self.startup.download = self.upgrade.progress.as_dict

    async def _upgraded(self, upgrade: ModelUpgrade) -> None:
        try:
            await upgrade.run()
        finally:
            if self.startup.stage == "downloading":  # else the warm-up's end decides
                self.startup.advance("ready")

    async def _switch_engine(self, engine: Engine) -> None:
        """The downloaded model takes over: primed, then every later turn uses it. The old engine
        is closed once no turn that started on it can still run (turn_timeout)."""
        assert self.agent is not None
        old = self.engine
        await self.agent.switch_engine(engine)
        self._engine = engine
        self._retired.append(old)
        self._retiring = asyncio.create_task(self._retire(old), name="retire-engine")

    async def _retire(self, old: Engine) -> None:
        await asyncio.sleep(self.options.agent.turn_timeout)
        self._retired.remove(old)
        await old.close()

    def _load_custom(self) -> CustomSetup | None:
        """The user's personas and tools (`custom_file`); a bad file stops the hub with a clear error."""
        custom = self.options.custom
        if not custom.custom_file:
            return None
        deps = self._tool_deps = ToolDeps(secrets=parse_secrets(custom.tool_secrets), policy=self.policy,
                                          reporter=self.later.reporter, entities=self.store,
                                          language=custom.language)
        setup = load_custom_file(Path(custom.custom_file), deps)
        for tool in setup.tools:
            self.registry.register(tool)
        _LOGGER.info("custom file %s: %d personas, %d tools", custom.custom_file,
                     len(setup.personas), len(setup.tools))
        return setup

    def _persona_book(self, home_tools: list[str]) -> PersonaBook:
        default = self.options.custom.default_persona or (self.custom and self.custom.default_persona) or "home"
        try:
            return PersonaBook(home_persona(ASSISTANT_INSTRUCTIONS), self.custom.personas if self.custom else (),
                               default=default, home_tools=home_tools)
        except ValueError as err:
            raise ConfigError(f"default_persona: {err}") from None

    async def _start(self, component: Component) -> None:
        await component.start()
        self._started.append(component)

    async def _primed(self) -> None:
        """Ready once the stable prompt is primed (engines that cannot prime are ready at once)."""
        primer = self.agent.priming.primer if self.agent is not None else None
        deadline = asyncio.get_running_loop().time() + PRIMING_WAIT_S
        while (primer is not None and primer.supported and not primer.primes
               and asyncio.get_running_loop().time() < deadline):
            await asyncio.sleep(0.2)
        give_back()  # what loading and priming freed
        self.startup.advance("downloading" if self.upgrade is not None and self.upgrade.running else "ready")
        if self.http is not None:
            self.http.log_ready_link()

    async def stop(self) -> bool:
        """Let running turns finish for SHUTDOWN_GRACE_S, end the rest with the spoken "stopping"
        reply, then stop the parts in reverse; each part gets what is left of SHUTDOWN_S.
        False when a part was left behind (e.g. the model still inside a long prompt batch)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + SHUTDOWN_S
        stopped = True
        for task in (self._warming, self._upgrading, self._retiring):
            if task is not None:
                task.cancel()
        if self.agent is not None and not await self.agent.wait_idle(SHUTDOWN_GRACE_S):
            _LOGGER.warning("turns still running after %.0f s end with 'stopping'", SHUTDOWN_GRACE_S)
            self.agent.stop_turns()
            await self.agent.wait_idle(1.0)
        parts: list[tuple[str, Callable[[], Awaitable[None]]]] = [
            (type(c).__name__, c.stop) for c in reversed(self._started)]
        self._started.clear()
        if self.custom is not None:
            parts.append(("custom tools", self.custom.close))
        for engine in [*self._retired, *([self._engine] if self._engine is not None else [])]:
            parts.append(("model engine", engine.close))
        for name, stop in parts:
            try:
                async with asyncio.timeout(max(0.1, deadline - loop.time())):
                    await stop()
            except TimeoutError:
                _LOGGER.error("stopping %s took too long: left behind", name)
                stopped = False
            except Exception:
                _LOGGER.exception("stopping %s failed", name)
        return stopped

    def _http_api(self) -> "RestApi":
        """The HTTP API with the voice routes; both get the agent once the model is loaded."""
        from hub.interfaces.voice.pipeline import VoicePipeline
        from hub.interfaces.http.rest_api import RestApi
        from hub.interfaces.voice.http import add_voice_routes

        voice = self.voice = VoicePipeline.from_options(self.options.voice, None)
        return RestApi(self, self.options.http, route_hooks=[lambda web_app: add_voice_routes(web_app, voice)])


def _option(parse: Callable[[str | None], T], option: str | None) -> T:
    """An option's text as `parse` reads it; its mistake a ConfigError."""
    try:
        return parse(option)
    except ValueError as err:
        raise ConfigError(str(err)) from None


async def _settled(store: EntityStore, quiet_s: float = 0.3, timeout_s: float = 5.0) -> None:
    """Wait until discovered entities stop arriving (the demo home announces itself at start)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    seen, quiet_since = store.version, loop.time()
    while loop.time() < deadline:
        await asyncio.sleep(0.05)
        if store.version != seen:
            seen, quiet_since = store.version, loop.time()
        elif len(store) and loop.time() - quiet_since >= quiet_s:
            return
