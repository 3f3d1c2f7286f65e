"""The hub's HTTP interface: REST API, SSE streaming, OpenAI-compatible chat, metrics, web page.

`RestApi(hub_app)` is a component (`start()/stop()`) serving on the `http_port` option. Every
route but `/health` and the page's static files needs the API token (`Authorization: Bearer`),
except requests that come through Home Assistant's ingress proxy inside the add-on. Client
mistakes get a 4xx with `{"error": code, "message": text}`, never a 500.

Other modules add routes through `route_hooks` (callables taking the `web.Application`, called
before the app starts; their routes sit behind the same token check). The speech routes of
`hub.interfaces.voice.http.add_voice_routes` plug in this way; `/api/status` lists what they
added so the page can offer the microphone.

The API starts before the model is loaded: until the hub calls `attach()`, `/health` and the
page report the warm-up, and a request to any other route waits for it (up to `turn_timeout`,
then 503 `warming`). The OpenAI-compatible routes (`/v1/…`) answer errors in OpenAI's shape.
"""

from __future__ import annotations

import asyncio
import html
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from importlib import resources
from typing import Any, AsyncIterator, Callable, Protocol, Sequence

import jsonschema
from aiohttp import web
from aiohttp.typedefs import Handler

from hub import __version__
from hub.agent.activity import Activity, Turn
from hub.agent.api import AgentApi
from hub.agent.types import TurnDone
from hub.config import validator_for
from hub.home.name_book import NameBook
from hub.interfaces import json_input
from hub.interfaces.announce import DiscoveryOptions, announced_host
from hub.interfaces.http.discovery import ApiDiscovery
from hub.interfaces.http import openapi, sse, rest_schema as schema
from hub.interfaces.http.agent_routes import AgentHost, AgentRoutes, running_agent
from hub.interfaces.http.auth import TOKEN_FILE, Authenticator, ingress_path, load_or_create_token
from hub.interfaces.http.errors import ClientError, json_error_body, json_errors
from hub.interfaces.http.health import set_aside_json, shown_startup
from hub.interfaces.http.openai_routes import CompletionOptions, OpenAiRoutes
from hub.llm.types import Engine
from hub.memory import MemoryReport
from hub.interfaces.http.metrics import METRICS, Gauge, HubMetrics, model_gauges
from hub.interfaces.http.names_routes import NamesRoutes
from hub.interfaces.http.plan_routes import PlanRoutes
from hub.interfaces.http.turn_json import namesakes_json, result_json, turn_event, turn_request
from hub.settings import RUNTIME_TYPES, RuntimeSettings, SettingsNotSaved
from hub.startup import SERVING

_LOGGER = logging.getLogger(__name__)

PUBLIC_PATHS = frozenset({"/health", "/", "/index.html", "/app.js", "/pages.js", "/style.css", "/favicon.svg"})
STATIC_TYPES = {"app.js": "text/javascript", "pages.js": "text/javascript", "style.css": "text/css",
                "favicon.svg": "image/svg+xml"}
RouteHook = Callable[[web.Application], None]


@dataclass(frozen=True)
class HttpOptions:
    http_port: int
    api_token: str | None = field(repr=False)
    turn_timeout: int  # a request's wait during the warm-up
    language: str
    state_dir: Path  # the generated token is kept there
    in_addon: bool  # trusts Home Assistant's ingress
    completions: CompletionOptions
    discovery: DiscoveryOptions  # how Home Assistant's Bolt Hub integration finds the API


class HubAppLike(AgentHost, Protocol):
    """What the API needs from `hub.app.HubApp` (after `start()` loaded the engine and agent)."""

    settings: RuntimeSettings
    names: NameBook

    @property
    def engine(self) -> Engine: ...

    def memory(self, objects: bool = True) -> MemoryReport: ...


class RestApi:
    def __init__(
        self,
        hub_app: HubAppLike,
        options: HttpOptions,
        *,
        host: str = "0.0.0.0",
        port: int | None = None,
        route_hooks: Sequence[RouteHook] = (),
    ) -> None:
        self._hub = hub_app
        self._options = options
        self._host = host
        self._port = self._options.http_port if port is None else port
        self.metrics: HubMetrics = METRICS
        self._route_hooks = list(route_hooks)
        self._runner: web.AppRunner | None = None
        self.app: web.Application | None = None  # set by start()
        self._started = time.monotonic()
        self._hook_routes: list[dict[str, str]] = []
        self._stop_observing: Callable[[], None] | None = None
        self._discovery: ApiDiscovery | None = None  # from announce()
        self._openapi = openapi.openapi_document()  # start() adds the routes of route hooks
        self._validators = {
            name: jsonschema.Draft202012Validator(body)
            for name, body in (("ask", schema.ASK_REQUEST), ("plan", schema.PLAN_REQUEST),
                               ("name", schema.NAME_CHANGE), ("untargeted", schema.UNTARGETED_UPDATE),
                               ("tool", schema.TOOL_RUN_REQUEST),
                               ("greet", schema.GREET_REQUEST),
                               ("settings", schema.SETTINGS_UPDATE), ("chat", schema.CHAT_REQUEST))
        }
        self._static = {name: _read_web_file(name) for name in ("index.html", *STATIC_TYPES)}
        self.token = ""
        self._token_is_new = False
        self._auth = Authenticator("", trust_ingress=False)  # start() makes the real one
        self._stopping = asyncio.Event()  # cuts running chat completions (hub.interfaces.http.cutoff)
        self._attached = asyncio.Event()  # the agent is there (see attach())
        self._agent_routes = AgentRoutes(hub_app, self._json_body, options.language, self.metrics)
        self._openai = OpenAiRoutes(hub_app, options.completions, self._json_body, self._stopping)
        self._plans = PlanRoutes(hub_app, self._json_body, lambda request: self._auth.client_of(request),
                                 lambda: hub_app.settings.reasoning.budget)
        self._names = NamesRoutes(hub_app, self._json_body)

    # --- lifecycle ----------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The bound port (useful when started with port 0)."""
        assert self._runner is not None, "not started"
        port: int = self._runner.addresses[0][1]
        return port

    async def start(self) -> None:
        self.token, self._token_is_new = await asyncio.to_thread(
            load_or_create_token, self._options.api_token, self._options.state_dir)
        auth = self._auth = Authenticator(self.token, trust_ingress=self._options.in_addon)
        app = web.Application(client_max_size=schema.MAX_BODY_BYTES,
                              middlewares=[json_errors, auth.middleware(_is_public, json_error_body), self._warming])
        self._add_routes(app)
        self.app = app
        known = {r.resource.canonical for r in app.router.routes() if r.resource is not None}
        for hook in self._route_hooks:
            hook(app)
        self._hook_routes = [
            {"method": r.method, "path": r.resource.canonical}
            for r in app.router.routes()
            if r.resource is not None and r.resource.canonical not in known and r.method != "HEAD"
        ]
        for route in self._hook_routes:
            operations = self._openapi["paths"].setdefault(route["path"], {})
            operations[route["method"].lower()] = openapi.hook_route_doc(route["method"], route["path"])
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        try:
            await web.TCPSite(self._runner, self._host, self._port).start()
        except OSError as err:
            await self._runner.cleanup()
            self._runner = None
            raise OSError(f"cannot serve HTTP on {self._host}:{self._port}: {err.strerror}") from err
        self._started = time.monotonic()
        _LOGGER.info("HTTP API and web page on http://%s:%s/", self._host, self.port)
        if self._hub.agent is not None:
            self.attach()

    def attach(self) -> None:
        """The agent is there: serve every route, and count every turn, whichever interface asked."""
        if not self._attached.is_set():
            self._stop_observing = self._agent.add_observer(self._observe_turn)
            self._attached.set()

    async def announce(self, discovery: ApiDiscovery | None = None) -> None:
        """Tell Home Assistant's Bolt Hub integration where the API is (once the hub serves):
        `discovery` (default: as the options say, hub.interfaces.http.discovery)."""
        self._discovery = discovery or ApiDiscovery(self._options.discovery, self.token)
        await self._discovery.start(self.port, announced_host(self._host))

    def ready_link(self) -> str:
        """The page's address for a browser on this machine. It carries the token (as Jupyter
        prints it) only at the start that generated it: logs get shared, and a later start's
        line says where the token is. A token the user set as `api_token` is never printed."""
        host = "127.0.0.1" if self._host in ("0.0.0.0", "::", "") else self._host
        page = f"http://{host}:{self.port}/"
        if self._options.api_token:
            return f"{page} (token: the api_token option)"
        if self._token_is_new:
            return f"{page}?token={self.token}"
        return f"{page} (token: in {self._options.state_dir / TOKEN_FILE})"

    def log_ready_link(self) -> None:
        if not self._options.in_addon:  # in the add-on the page is behind Home Assistant's ingress
            _LOGGER.info("ready: open %s", self.ready_link())

    @web.middleware
    async def _warming(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """During the warm-up a request waits for the agent (up to turn_timeout), then gets a 503."""
        if not (self._attached.is_set() or _is_public(request)):
            try:
                await asyncio.wait_for(self._attached.wait(), self._options.turn_timeout)
            except asyncio.TimeoutError:
                startup = self._startup()
                raise ClientError(503, "warming", f"The hub is warming up ({startup['label']}, "
                                                  f"{round(startup['progress'] * 100)}%); retry shortly.") from None
        return await handler(request)

    def _startup(self) -> dict[str, Any]:
        progress = getattr(self._hub, "startup", None)
        if progress is None:  # a hub without a warm-up (tests that build one by hand)
            return {"stage": "ready", "label": "ready", "progress": 1.0}
        stage: dict[str, Any] = progress.as_dict()
        return stage

    async def stop(self) -> None:
        self._stopping.set()
        if self._discovery is not None:
            await self._discovery.stop()
            self._discovery = None
        if self._stop_observing is not None:
            self._stop_observing()
            self._stop_observing = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def _observe_turn(self, turn: Turn | None, activity: Activity) -> None:
        if isinstance(activity, TurnDone) and turn is not None:
            self.metrics.record_turn(activity.result, turn.request.source)

    def _add_routes(self, app: web.Application) -> None:
        app.router.add_get("/", self._page)
        app.router.add_get("/index.html", self._page)
        for name in STATIC_TYPES:
            app.router.add_get(f"/{name}", self._static_file)
        app.router.add_get("/health", self._health)
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/api/openapi.json", self._openapi_json)
        app.router.add_get("/api/status", self._status)
        app.router.add_get("/api/memory", self._memory)
        app.router.add_post("/api/ask", self._ask)
        app.router.add_get("/api/settings", self._get_settings)
        app.router.add_put("/api/settings", self._put_settings)
        self._agent_routes.add_routes(app)
        self._plans.add_routes(app)
        self._names.add_routes(app)
        self._openai.add_routes(app)

    # --- page and plumbing --------------------------------------------------------------------

    async def _page(self, request: web.Request) -> web.Response:
        prefix = ingress_path(request) or ""
        page = self._static["index.html"].replace(
            "<!--base-->", f'<base href="{html.escape(prefix, quote=True)}/">')
        return web.Response(text=page, content_type="text/html", headers={"Cache-Control": "no-cache"})

    async def _static_file(self, request: web.Request) -> web.Response:
        name = request.path.lstrip("/")
        return web.Response(text=self._static[name], content_type=STATIC_TYPES[name],
                            headers={"Cache-Control": "no-cache"})

    async def _health(self, request: web.Request) -> web.Response:
        startup = self._startup()
        ready = self._attached.is_set() and startup["stage"] in SERVING  # serving: ready, or downloading
        full = self._auth.allows(request)  # the LAN sees no names nor paths (hub.interfaces.http.health)
        return web.json_response({"status": "ok" if ready else "warming", "version": __version__,
                                  "startup": shown_startup(startup, full=full),
                                  "set_aside": set_aside_json(self._options.state_dir, full=full)},
                                 headers={"Cache-Control": "no-cache"})

    async def _openapi_json(self, request: web.Request) -> web.Response:
        return web.json_response(self._openapi)

    async def _metrics(self, request: web.Request) -> web.Response:
        gauges = [
            *model_gauges(self._hub.engine.info),
            Gauge("bolt_hub_uptime_seconds", "Seconds since the HTTP API started.",
                  time.monotonic() - self._started),
            Gauge("bolt_hub_entities", "Entities the hub knows.", len(self._hub.store)),
            Gauge("bolt_hub_conversations", "Conversations held in memory.",
                  len(self._agent.conversations.ids())),
        ]
        return web.Response(text=self.metrics.render(gauges), content_type="text/plain",
                            charset="utf-8", headers={"X-Content-Type-Options": "nosniff"})

    async def _memory(self, request: web.Request) -> web.Response:
        """?objects=false: the model's parts alone, without the walk of the hub's objects."""
        said = request.query.getall("objects", ["true"])
        if len(said) != 1 or said[0] not in ("true", "false"):
            raise ClientError(400, "invalid_parameter", "objects must be true or false, once")
        objects = said[0] == "true"
        report = await asyncio.to_thread(self._hub.memory, objects)  # the walk: a second or two
        return web.json_response(report.as_json())

    async def _status(self, request: web.Request) -> web.Response:
        info = self._hub.engine.info
        return web.json_response({
            "version": __version__,
            "model": {"name": info.name, "architecture": info.architecture, "n_ctx": info.n_ctx,
                      "n_params": info.n_params, "stand_in": info.is_stand_in, "path": info.path},
            "download": self._startup().get("download"),
            "entities": len(self._hub.store),
            "uptime_s": round(time.monotonic() - self._started, 3),
            "languages": list(self._agent.languages),
            "settings": self._hub.settings.as_dict(),
            "home_sources": sorted({e.source for e in self._hub.store.all()}),
            "namesakes": namesakes_json(self._hub.store.all()),
            "speech": {"routes": self._hook_routes},
            "set_aside": set_aside_json(self._options.state_dir, full=True),
        })

    @property
    def _agent(self) -> AgentApi:
        return running_agent(self._hub)

    async def _json_body(self, request: web.Request, validator: str) -> Any:
        try:
            raw = await request.read()
        except web.HTTPRequestEntityTooLarge:
            raise ClientError(413, "body_too_large",
                              f"The body is larger than {schema.MAX_BODY_BYTES} bytes.") from None
        if not raw.strip():
            raise ClientError(400, "invalid_body", "The body is empty: send a JSON object.")
        try:
            data = json_input.loads(raw, parse_constant=_reject_constant)
        except json_input.BadJson as err:
            raise ClientError(400, "invalid_json", f"The body is not valid JSON: {err}") from None
        error = jsonschema.exceptions.best_match(self._validators[validator].iter_errors(data))
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path)
            param = ".".join(f"[{p}]" if isinstance(p, int) else str(p) for p in error.absolute_path)
            raise ClientError(400, "invalid_body", f"{where or 'body'}: {error.message}", param or None)
        return data

    # --- turns --------------------------------------------------------------------------------

    async def _ask(self, request: web.Request) -> web.StreamResponse:
        body = await self._json_body(request, "ask")
        agent = self._agent
        turn = turn_request(body, self._auth.client_of(request), self._hub.settings.reasoning.budget)
        if "text/event-stream" not in request.headers.get("Accept", ""):
            return web.json_response(result_json(await agent.ask(turn)))
        return await self._stream_turn(request, agent.run(turn))

    async def _stream_turn(self, request: web.Request, events: AsyncIterator[Any]) -> web.StreamResponse:
        response = await sse.start(request)
        connected = True
        async for event in events:
            if connected:
                # the turn goes on when the client leaves: an understood command still happens
                connected = await sse.send_event(response, *turn_event(event))
        if connected:
            await sse.finish(response)
        return response

    # --- settings -----------------------------------------------------------------------------

    async def _get_settings(self, request: web.Request) -> web.Response:
        return web.json_response(self._hub.settings.as_dict())

    async def _put_settings(self, request: web.Request) -> web.Response:
        body = await self._json_body(request, "settings")
        # validate everything first so a bad value changes nothing
        for name, value in body.items():
            try:
                validator_for(RUNTIME_TYPES[name])(value)
            except Exception as err:
                raise ClientError(400, "invalid_setting", f"{name}: {err}") from None
        try:
            self._hub.settings.update(body)
        except SettingsNotSaved as err:  # a full or read-only disk: nothing was applied
            raise ClientError(507, "settings_not_saved", str(err)) from None
        return web.json_response(self._hub.settings.as_dict())

# --- helpers ------------------------------------------------------------------------------------


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not valid JSON")


def _is_public(request: web.Request) -> bool:
    return request.path in PUBLIC_PATHS


def _read_web_file(name: str) -> str:
    return resources.files("hub.interfaces.http").joinpath("web", name).read_text(encoding="utf-8")
