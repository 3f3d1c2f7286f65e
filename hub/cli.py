"""`bolt-hub serve | ask | check`: the hub's command line."""

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
from typing import Sequence

from hub import __version__, config as config_module
from hub.config import ConfigError, HubConfig

_LOGGER = logging.getLogger("hub")


class CliError(Exception):
    """A problem to report in one plain line (exit status 2), never as a traceback."""


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        config = config_module.load(args.config, **_option_overrides(args))
        logging.basicConfig(
            level=getattr(logging, (args.log_level or config.log_level).upper()),
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        )
        for chatty in ("transitions", "amqtt"):  # the embedded broker's state machine
            logging.getLogger(chatty).setLevel(logging.WARNING)
        return args.handler(args, config)
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

    serve = commands.add_parser("serve", help="run the hub (Wyoming, MQTT, HTTP)")
    serve.set_defaults(handler=_serve)

    ask = commands.add_parser("ask", help="run one turn and print the reply, tool calls and timings")
    ask.add_argument("text")
    ask.add_argument("--language")
    ask.add_argument("--conversation-id")
    ask.add_argument("--reasoning", choices=["on", "off", "budget"])
    ask.add_argument("--reasoning-budget", type=int)
    ask.add_argument("--no-fast-path", action="store_true", help="always ask the model")
    ask.add_argument("--json", action="store_true", help="print the result as JSON")
    ask.set_defaults(handler=_ask)

    check = commands.add_parser("check", help="check the options and the model file, estimate memory")
    check.set_defaults(handler=_check)
    return parser


def _option_overrides(args: argparse.Namespace) -> dict:
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
    from hub.agent.types import ReplyChunk, ToolFinished, TurnDone, TurnRequest
    from hub.app import HubApp

    if not (config.mqtt_host or config.ha_url or config.in_addon):
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
                print(f"\n  [tool] {event.call.name}({json.dumps(event.call.arguments, ensure_ascii=False)})"
                      f" -> {'ok' if event.ok else 'error'} {json.dumps(event.data, ensure_ascii=False)}",
                      file=sys.stderr)
            elif isinstance(event, TurnDone):
                result = event.result
    finally:
        await app.stop()
    assert result is not None
    if args.json:
        print(json.dumps(_result_json(result), ensure_ascii=False, indent=2))
    else:
        t = result.timings
        print()
        print(f"  [{result.path}] prefill {t.prefill_s:.2f}s, first reply {t.first_token_s:.2f}s, "
              f"decode {t.completion_tokens} tok in {t.decode_s:.2f}s"
              f" ({t.completion_tokens / t.decode_s if t.decode_s else 0:.1f} tok/s), "
              f"prompt {t.prompt_tokens} tok ({t.evaluated_prompt_tokens} evaluated), "
              f"tools {t.tools_s:.2f}s, total {t.total_s:.2f}s", file=sys.stderr)
    return 0 if result.ok else 1


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _result_json(result) -> dict:
    from dataclasses import asdict

    data = asdict(result)
    data["tool_calls"] = [
        {"name": f.call.name, "arguments": f.call.arguments, "ok": f.ok, "result": f.data}
        for f in result.tool_calls
    ]
    return data


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
    from hub.llm.inspect import inspect_gguf
    from hub.llm.models import STAND_IN_WARNING, resolve_model_path
    from hub.llm.types import SMALL_MODEL_PARAMS

    print("Options: valid")
    for name, value in sorted(config.values.items()):
        shown = "***" if value and ("token" in name or "password" in name) else value
        print(f"  {name}: {shown}")
    path, stand_in = resolve_model_path(config.model_path)
    print(f"Model file: {path}")
    if stand_in:
        print(f"  note: {STAND_IN_WARNING}")
    report = inspect_gguf(path, n_ctx=config.n_ctx, kv_cache_type=config.kv_cache_type)
    for line in report.describe():
        print(f"  {line}")
    if stand_in or 0 < report.n_params < SMALL_MODEL_PARAMS:
        print("Device control by the model: " + ("allowed (model_home_control)" if config.model_home_control
              else "off: a stand-in model chats and reads states; only the fast path acts"))
    else:
        print("Device control by the model: on")
    problems = report.problems(n_ctx=config.n_ctx)
    for problem in problems:
        print(f"Problem: {problem}")
    return 1 if problems else 0
