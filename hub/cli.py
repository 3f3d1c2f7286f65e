"""`bolt-hub serve | ask | check | health`: the hub's command line."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import socket
import sys
from pathlib import Path
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

from hub import __version__, config as config_module
from hub.config import ConfigError, HubConfig, shown_value
from hub.interfaces.http.bad_requests import quiet_bad_requests

if TYPE_CHECKING:  # imported where used: `serve` never loads the client
    from hub.hub_client import RunningHub

_LOGGER = logging.getLogger("hub")


@dataclass(frozen=True)
class CliOptions:
    """The options the command line itself reads (the hub it starts gets all of them)."""

    log_level: str
    http_port: int
    wyoming_port: int
    api_token: str | None = field(repr=False)
    turn_timeout: int
    engine: str
    remote_url: str | None
    model_path: str | None
    n_ctx: int
    kv_cache_type: str
    model_home_control: bool
    mqtt_host: str | None
    ha_url: str | None
    in_addon: bool
    state_dir: Path


class CliError(Exception):
    """A problem to report in one plain line (exit status 2), never as a traceback."""


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        config = config_module.load(args.config, **_option_overrides(args))
        logging.basicConfig(
            level=getattr(logging, (args.log_level or config.options_for(CliOptions).log_level).upper()),
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        )
        for chatty in ("transitions", "amqtt"):  # the embedded broker's state machine
            logging.getLogger(chatty).setLevel(logging.WARNING)
        quiet_bad_requests()
        for warning in config_module.unknown_env_warnings():
            _LOGGER.warning("%s", warning)
        code: int = args.handler(args, config)
        return code
    except KeyboardInterrupt:
        return 130
    except (CliError, ConfigError, OSError) as err:
        print(f"bolt-hub: {err}", file=sys.stderr)
        return 2
    except Exception as err:  # EngineError, ModelNotFound, ...: one clear line
        from hub.llm.types import EngineError
        from hub.llm.models import ModelNotFound

        if isinstance(err, (EngineError, ModelNotFound)):
            print(f"bolt-hub: {err}", file=sys.stderr)
            return 2
        raise


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bolt-hub", description="Local voice hub for smart homes.")
    parser.add_argument("--version", action="version", version=f"bolt-hub {__version__}")
    parser.add_argument("--config", type=Path, help="options file (YAML or JSON); default: /data/options.json in the add-on")
    parser.add_argument("--model", dest="model_path", help="GGUF model file (overrides model_path)")
    parser.add_argument("--log-level", choices=["debug", "info", "warning", "error"])
    commands = parser.add_subparsers(dest="command", required=True)
    with_options: dict[str, Any] = {"epilog": config_module.options_help(),
                                    "formatter_class": argparse.RawDescriptionHelpFormatter}

    serve = commands.add_parser("serve", help="run the hub (Wyoming, MQTT, HTTP)", **with_options)
    serve.set_defaults(handler=_serve)

    ask = commands.add_parser(
        "ask", help="one turn: asks the hub running on this machine (its REST API and saved token), "
                    "or, when none runs, a hub started in this process", **with_options)
    ask.add_argument("text")
    ask.add_argument("--hub", metavar="URL", help="ask the hub at this address (default: "
                                                   "http://127.0.0.1:<http_port> if one answers there)")
    ask.add_argument("--language")
    ask.add_argument("--conversation-id")
    ask.add_argument("--reasoning", choices=["on", "off", "budget"])
    ask.add_argument("--reasoning-budget", type=int)
    ask.add_argument("--no-fast-path", action="store_true", help="always ask the model")
    ask.add_argument("--json", action="store_true", help="print the result as JSON")
    ask.set_defaults(handler=_ask)

    check = commands.add_parser("check", help="check everything `serve` checks (options, custom file, "
                                              "model or remote server) and estimate memory", **with_options)
    check.set_defaults(handler=_check)

    health = commands.add_parser("health", help="exit 0 when the running hub answers: HTTP /health, and "
                                                "Wyoming describe once it is warm (the image's HEALTHCHECK)")
    health.add_argument("--host", default="127.0.0.1")
    health.set_defaults(handler=_health)
    return parser


def _option_overrides(args: argparse.Namespace) -> dict[str, Any]:
    overrides = {"model_path": args.model_path}
    if getattr(args, "no_fast_path", False):
        overrides["fast_path"] = False
    if getattr(args, "reasoning", None):
        overrides["reasoning"] = args.reasoning
    if getattr(args, "reasoning_budget", None) is not None:
        overrides["reasoning_budget"] = args.reasoning_budget
    return overrides


# --- ask --------------------------------------------------------------------------------------


def _ask(args: argparse.Namespace, config: HubConfig) -> int:
    return asyncio.run(_ask_async(args, config))


async def _ask_async(args: argparse.Namespace, config: HubConfig) -> int:
    from hub.hub_client import RunningHub, saved_token

    options = config.options_for(CliOptions)
    url = (args.hub or f"http://127.0.0.1:{options.http_port}").rstrip("/")
    if await RunningHub.health(url) is not None:
        token = saved_token(options.api_token, options.state_dir)
        if token is None:
            raise CliError(f"a hub runs at {url}, but its API token is neither the api_token option nor in "
                           f"{options.state_dir / 'api_token'}: pass --config with its options")
        print(f"(asking the hub running at {url})", file=sys.stderr)
        result = await _ask_running(RunningHub(url, token), args, options)
    elif args.hub:
        raise CliError(f"no hub answers at {url}")
    else:
        print(f"(no hub runs at {url}: starting one in this process, with its own model and home)",
              file=sys.stderr)
        result = await _ask_in_process(args, config)
    _print_result(result, args.json)
    return 0 if result["ok"] else 1


async def _ask_running(hub: RunningHub, args: argparse.Namespace, options: CliOptions) -> dict[str, Any]:
    body = {"text": args.text, "conversation_id": args.conversation_id, "language": args.language}
    if args.reasoning:
        body["reasoning"] = {"mode": args.reasoning, **({"budget": args.reasoning_budget}
                                                        if args.reasoning_budget is not None else {})}
    if args.no_fast_path:
        raise CliError("--no-fast-path applies to a hub started in this process; the running hub "
                       "uses its own fast_path option")
    await hub.wait_ready(timeout_s=float(options.turn_timeout) * 4)
    result: dict[str, Any] | None = None
    async for name, data in hub.ask({k: v for k, v in body.items() if v is not None},
                                    timeout_s=float(options.turn_timeout) * 2):
        if name == "chunk" and not args.json:
            print(data["text"], end="", flush=True)
        elif name == "tool_finished" and not args.json:
            _print_tool(data)
        elif name == "done":
            result = data
    if result is None:
        raise CliError(f"the hub at {hub.url} ended the turn without a result")
    return result


async def _ask_in_process(args: argparse.Namespace, config: HubConfig) -> dict[str, Any]:
    from hub.agent.types import ReplyChunk, ToolFinished, TurnDone, TurnRequest
    from hub.app import HubApp
    from hub.interfaces.http.turn_json import result_json, tool_finished_json

    options = config.options_for(CliOptions)
    if not (options.mqtt_host or options.ha_url or options.in_addon):
        # the embedded broker of a one-off turn must not collide with a running `serve`
        config = config.with_changes(mqtt_port=_free_port())
    app = HubApp(config)
    await app.start(listeners=False)
    try:
        assert app.agent is not None
        request = TurnRequest(args.text, conversation_id=args.conversation_id, language=args.language)
        result = None
        async for event in app.agent.run(request):
            if isinstance(event, ReplyChunk) and not args.json:
                print(event.text, end="", flush=True)
            elif isinstance(event, ToolFinished) and not args.json:
                _print_tool(tool_finished_json(event))
            elif isinstance(event, TurnDone):
                result = event.result
    finally:
        await app.stop()
    assert result is not None
    return result_json(result)


def _print_tool(call: dict[str, Any]) -> None:
    print(f"\n  [tool] {call['name']}({json.dumps(call['arguments'], ensure_ascii=False)})"
          f" -> {'ok' if call['ok'] else 'error'} {json.dumps(call['result'], ensure_ascii=False)}",
          file=sys.stderr)


def _print_result(result: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
        return
    t = result["timings"]
    rate = t["completion_tokens"] / t["decode_s"] if t["decode_s"] else 0
    print()
    print(f"  [{result['path']}] prefill {t['prefill_s']:.2f}s, first reply {t['first_token_s']:.2f}s, "
          f"decode {t['completion_tokens']} tok in {t['decode_s']:.2f}s ({rate:.1f} tok/s), "
          f"prompt {t['prompt_tokens']} tok ({t['evaluated_prompt_tokens']} evaluated), "
          f"tools {t['tools_s']:.2f}s, total {t['total_s']:.2f}s", file=sys.stderr)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


# --- serve ------------------------------------------------------------------------------------


def _serve(args: argparse.Namespace, config: HubConfig) -> int:
    return asyncio.run(_serve_async(config))


async def _serve_async(config: HubConfig) -> int:
    from hub.app import HubApp

    app = HubApp(config)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await app.start()
        _LOGGER.info("Bolt Hub %s running with %s", __version__, app.engine.info.name)
        await stop.wait()
        _LOGGER.info("stopping")
    finally:
        stopped = await app.stop()
    if not stopped:
        # the model's thread is still inside llama.cpp, and the interpreter would wait for it at
        # exit: everything else has stopped (replies sent, offline published), so leave now
        logging.shutdown()
        sys.stdout.flush()
        os._exit(0)
    return 0


# --- check ------------------------------------------------------------------------------------


def _check(args: argparse.Namespace, config: HubConfig) -> int:
    print("Options: valid")
    for name, value in sorted(config.values.items()):
        print(f"  {name}: {shown_value(name, value)}")
    problems = asyncio.run(_setup_problems(config))
    options = config.options_for(CliOptions)
    problems += (asyncio.run(_remote_problems(config)) if options.engine == "openai"
                 else _model_problems(options, config))
    for problem in problems:
        print(f"Problem: {problem}")
    print(f"{len(problems)} problem(s): `bolt-hub serve` would not start" if problems else "Ready to serve")
    return 1 if problems else 0


async def _setup_problems(config: HubConfig) -> list[str]:
    """What `serve` validates before the model: the custom file, personas, policy (HubApp's own code)."""
    from hub.app import HubApp

    try:
        app = HubApp(config)
    except ConfigError as err:
        return [str(err)]
    if app.custom is not None:
        await app.custom.close()
    return []


async def _remote_problems(config: HubConfig) -> list[str]:
    """`engine: openai`: the server must be named and answer, as `serve` requires."""
    from hub.llm.factory import remote_engine
    from hub.options import hub_options
    from hub.llm.types import EngineError

    try:
        remote = remote_engine(hub_options(config).llm)
    except EngineError as err:
        return [str(err)]
    try:
        info = await remote.connect()
        print(f"Remote model: {info.name} at {config.options_for(CliOptions).remote_url}")
        return []
    except EngineError as err:
        return [str(err)]
    finally:
        await remote.close()


def _model_problems(options: CliOptions, config: HubConfig) -> list[str]:
    from hub.llm.download import download_plan
    from hub.llm.factory import download_source, load_setup
    from hub.llm.inspect import inspect_gguf
    from hub.llm.model_source import load_failure, verified_file
    from hub.llm.models import STAND_IN_WARNING, resolve_model_path
    from hub.llm.types import EngineError, stands_in
    from hub.memory_budget import estimate
    from hub.options import hub_options

    try:
        source = download_source(hub_options(config).llm)
    except EngineError as err:
        return [str(err)]
    downloaded = verified_file(source) if source is not None else None
    if source is not None and downloaded is None:
        print("\n".join(download_plan(source)))
    elif source is not None and (error := load_failure(source, load_setup(hub_options(config).llm))):
        print(f"Model download: {source.label} did not load ({error}); the stand-in serves until it changes")
        downloaded = None
    path, stand_in = (downloaded, False) if downloaded is not None else resolve_model_path(options.model_path)
    print(f"Model file: {path}")
    if stand_in and source is None:
        print(f"  note: {STAND_IN_WARNING}")
    report = inspect_gguf(path, n_ctx=options.n_ctx, kv_cache_type=options.kv_cache_type)
    for line in [*report.describe(), *estimate(config, report).describe()]:
        print(f"  {line}")
    if stands_in(stand_in, report.n_params):
        print("Device control by the model: " + ("allowed (model_home_control)" if options.model_home_control
              else "off: a stand-in model chats and reads states; only the fast path acts"))
    else:
        print("Device control by the model: on")
    return list(report.problems(n_ctx=options.n_ctx))


# --- health -----------------------------------------------------------------------------------


def _health(args: argparse.Namespace, config: HubConfig) -> int:
    return asyncio.run(_health_async(args.host, config.options_for(CliOptions)))


async def _health_async(host: str, options: CliOptions) -> int:
    """0 when healthy or still warming up (the image's start period covers the warm-up), else 1."""
    from hub.hub_client import RunningHub, wyoming_describe

    url = f"http://{host}:{options.http_port}"
    health = await RunningHub.health(url)
    if health is None:
        print(f"unhealthy: no answer from {url}/health")
        return 1
    if health["status"] == "warming":
        startup = health.get("startup", {})
        print(f"warming up: {startup.get('label')} ({round(100 * startup.get('progress', 0))}%)")
        return 0
    try:
        info = await wyoming_describe(host, options.wyoming_port)
    except (OSError, asyncio.TimeoutError) as err:
        print(f"unhealthy: the Wyoming server on {host}:{options.wyoming_port} does not answer describe "
              f"({err or type(err).__name__})")
        return 1
    if not info.handle:
        print(f"unhealthy: the Wyoming server on {host}:{options.wyoming_port} offers no conversation agent")
        return 1
    print(f"healthy: HTTP {url}/health ok, Wyoming {host}:{options.wyoming_port} describes {info.handle[0].name}")
    return 0
