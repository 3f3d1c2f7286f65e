"""All of the hub's options, in one table that also produces the add-on's `config.yaml` schema.

Each option has an add-on schema type (`str`, `bool`, `int(1,10)`, `list(a|b)`, `port`,
`password`, `float`, `url`, ending in `?` when optional) and a default. The voluptuous schema
is built from those same type strings, so the add-on UI and the hub cannot disagree.
Options come from, in order of precedence: environment (`BOLT_HUB_<NAME>`), a YAML/JSON file
(`--config`, or the add-on's `/data/options.json`), then the defaults.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import os
import re
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, TypeVar, cast

import voluptuous as vol
import yaml

ADDON_OPTIONS_PATH = Path("/data/options.json")
ENV_PREFIX = "BOLT_HUB_"
# BOLT_HUB_* variables that are not options: read by docker/run.sh and the speech-peer installer
NON_OPTION_ENV = frozenset({"BOLT_HUB_CONFIG", "BOLT_HUB_SPEECH_VENV"})


@dataclass(frozen=True)
class Option:
    name: str
    type: str  # add-on schema type
    default: Any = None  # None: no default (optional options only)
    addon_default: Any = None  # the add-on's own default (config.yaml's options), where it differs: the
    # command line and the container keep `default`


# the add-on's first start downloads a real model (serving the stand-in meanwhile): Gemma 4 E4B, the
# base of Bolt E4B (same architecture), until a GGUF repository of NVIDIA's own is confirmed
ADDON_MODEL_REPO = "ggml-org/gemma-4-E4B-it-GGUF"
ADDON_MODEL_FILE = "gemma-4-E4B-it-Q4_K_M.gguf"


OPTIONS: tuple[Option, ...] = (
    # general
    Option("log_level", "list(debug|info|warning|error)", "info"),
    Option("language", "str", "en"),
    Option("data_dir", "str?"),
    # model
    Option("engine", "list(local|openai)", "local"),  # openai: a remote OpenAI-compatible server
    Option("remote_url", "str?"),  # e.g. http://gpu-box:8080/v1
    Option("remote_model", "str?"),
    Option("remote_api_key", "password?"),
    Option("remote_server", "list(llama_server|vllm|ollama|nvidia|openai)", "llama_server"),
    Option("model_path", "str?"),  # a local GGUF: wins over model_repo
    Option("model_repo", "str?", addon_default=ADDON_MODEL_REPO),  # downloaded from (hub.llm.download)
    Option("model_file", "str?", addon_default=ADDON_MODEL_FILE),
    Option("hf_token", "password?"),  # for gated or private repositories
    Option("n_ctx", "int(512,65536)", 8192),
    Option("n_gpu_layers", "int(0,999)", 0),
    Option("threads", "int(0,256)", 0),
    Option("flash_attn", "bool", True),
    Option("kv_cache_type", "list(f16|q8_0|q4_0)", "f16"),
    Option("constrained_tools", "list(auto|always|never)", "auto"),
    Option("prompt_cache_mib", "int(0,65536)", 512),  # saved KV states of live conversations
    Option("draft_tokens", "int(0,16)", 0),  # prompt-lookup speculative decoding; 0 = off
    Option("temperature", "float", 0.2),
    # agent
    Option("conversational_mode", "bool", True),
    Option("reasoning", "list(on|off|budget)", "off"),
    Option("reasoning_budget", "int(0,8192)", 256),
    Option("max_reply_chars", "int(40,4000)", 400),
    Option("max_tokens", "int(16,4096)", 256),
    Option("max_tool_rounds", "int(1,10)", 3),
    Option("history_tokens", "int(0,32768)", 2048),
    Option("conversation_idle_minutes", "int(1,1440)", 30),
    Option("turn_timeout", "int(1,600)", 30),
    Option("queue_size", "int(1,1000)", 32),
    Option("fast_path", "bool", True),
    Option("model_home_control", "bool", False),  # a stand-in model (small) may act on devices
    # personas and user-defined tools (hub.custom)
    Option("custom_file", "str?"),  # YAML with personas: and tools:
    Option("tool_secrets", "password?"),  # name=value pairs (`;` or newlines) for tool templates
    Option("default_persona", "str?"),  # a persona key; empty: the home assistant
    # Home Assistant
    Option("ha_url", "str?"),
    Option("ha_token", "password?"),
    Option("expose", "list(assist|all)", "assist"),
    Option("include_entities", "str?"),  # comma-separated entity ids or globs
    Option("exclude_entities", "str?"),
    Option("satellites", "str?"),  # where each satellite is: id=area pairs (hub.home.places)
    Option("area_floors", "str?"),  # each area's floor without HA's floors: area=floor pairs (hub.home.places)
    Option("todo_lists", "str?"),  # the lists kept without HA, besides the shopping list (hub.home.local_lists)
    # safety policy for actions, and reports of outcomes that arrive later
    Option("allowed_domains", "str", "light,switch,fan,cover,valve,climate,humidifier,water_heater,"
                                     "media_player,vacuum,lawn_mower,lock,scene,script,button,input_button,"
                                     "input_boolean,todo,assist_satellite"),
    Option("allowed_services", "str?"),  # comma-separated domain.service globs; empty: any
    Option("read_only_entities", "str?"),  # ids/globs the hub may read but never control
    Option("confirm_entities", "str?"),  # ids/globs whose actions need a spoken yes
    Option("confirm_seconds", "int(5,300)", 30),
    Option("rate_limit_per_minute", "int(0,600)", 10),  # actions per entity; 0: no limit
    Option("action_report_timeout", "int(5,3600)", 120),
    Option("announce_reports", "bool", True),
    # Wyoming
    Option("wyoming_port", "port", 10500),
    Option("zeroconf", "bool", True),
    Option("wyoming_allowed_clients", "str?"),  # addresses/networks; empty: see wyoming_server
    Option("wyoming_idle_timeout", "int(1,3600)", 60),  # seconds without an event, no turn running
    Option("wyoming_max_connections", "int(1,1000)", 32),
    # MQTT
    Option("mqtt_host", "str?"),
    Option("mqtt_port", "port", 1883),
    Option("mqtt_username", "str?"),
    Option("mqtt_password", "password?"),
    Option("mqtt_tls", "bool", False),
    Option("mqtt_base_topic", "str", "bolt_hub"),
    Option("mqtt_discovery_prefix", "str", "homeassistant"),
    Option("instance_name", "str", "Bolt Hub"),
    # speech
    Option("stt_uri", "str?"),  # Wyoming STT, e.g. tcp://127.0.0.1:10300 (add-on: core-whisper)
    Option("tts_uri", "str?"),  # Wyoming TTS, e.g. tcp://127.0.0.1:10200 (add-on: core-piper)
    Option("tts_voices", "str?"),  # per language, e.g. en:en_US-joe-medium,de:de_DE-thorsten-medium
    # HTTP
    Option("http_port", "port", 8099),
    Option("api_token", "password?"),
)

OPTION_BY_NAME = {o.name: o for o in OPTIONS}
DERIVED = ("state_dir", "in_addon")  # HubConfig properties a part may ask for by name
T = TypeVar("T")


def env_name(option: str) -> str:
    return ENV_PREFIX + option.upper()


def shown_value(name: str, value: Any) -> Any:
    """A value as it may be printed or logged: every password-typed option is masked."""
    option = OPTION_BY_NAME.get(name)
    if option is not None and option.type.startswith("password") and value not in (None, ""):
        return "***"
    return value


def options_help() -> str:
    """Every option with its environment variable, type and default (for `--help`)."""
    lines = ["hub options (from a --config file or the environment, which wins):"]
    for option in OPTIONS:
        default = "" if option.default is None else f" = {option.default}"
        lines.append(f"  {option.name:<26} {env_name(option.name):<36} {option.type}{default}")
    return "\n".join(lines)


def unknown_env_warnings(environ: dict[str, str] | None = None) -> list[str]:
    """One warning per BOLT_HUB_* variable that names no option (a typo is otherwise silent)."""
    environ = dict(os.environ) if environ is None else environ
    warnings = []
    for key in sorted(environ):
        if not key.startswith(ENV_PREFIX) or key in NON_OPTION_ENV:
            continue
        name = key[len(ENV_PREFIX):].lower()
        if name in OPTION_BY_NAME:
            continue
        close = difflib.get_close_matches(name, OPTION_BY_NAME, n=1, cutoff=0.6)
        hint = f"; did you mean {env_name(close[0])} (option {close[0]})?" if close else ""
        warnings.append(f"{key} is not an option and is ignored{hint}")
    return warnings


_INT = re.compile(r"^int(?:\((-?\d*),(-?\d*)\))?$")
_FLOAT = re.compile(r"^float(?:\((-?[\d.]*),(-?[\d.]*)\))?$")
_LIST = re.compile(r"^list\((.+)\)$")


class ConfigError(ValueError):
    """Options that cannot be used; the message names the option and what is wrong."""


def validator_for(addon_type: str) -> Callable[[Any], Any]:
    """The voluptuous validator for one add-on schema type (without the optional `?`)."""
    if addon_type in ("str", "password"):
        return vol.All(vol.Coerce(str))
    if addon_type == "bool":
        return cast(Callable[[Any], Any], vol.Boolean())
    if addon_type == "port":
        return vol.All(vol.Coerce(int), vol.Range(min=1, max=65535))
    if addon_type == "url":
        return cast(Callable[[Any], Any], vol.Url())
    if addon_type == "email":
        return cast(Callable[[Any], Any], vol.Email())
    if match := _INT.match(addon_type):
        low, high = (int(v) if v else None for v in match.groups())
        return vol.All(vol.Coerce(int), vol.Range(min=low, max=high))
    if match := _FLOAT.match(addon_type):
        lowest, highest = (float(v) if v else None for v in match.groups())
        return vol.All(vol.Coerce(float), vol.Range(min=lowest, max=highest))
    if match := _LIST.match(addon_type):
        return vol.In(match.group(1).split("|"))
    raise ValueError(f"unknown add-on schema type {addon_type!r}")


def _build_schema() -> vol.Schema:
    fields: dict[Any, Any] = {}
    for option in OPTIONS:
        optional = option.type.endswith("?")
        base = option.type.rstrip("?")
        validator = validator_for(base)
        if optional:
            fields[vol.Optional(option.name)] = vol.Any(None, validator)
        else:
            fields[vol.Optional(option.name, default=option.default)] = validator
    return vol.Schema(fields, extra=vol.PREVENT_EXTRA)


SCHEMA = _build_schema()


@dataclass(frozen=True)
class HubConfig:
    """Validated options by name (missing optional options are absent). The parts get theirs
    as typed dataclasses (`hub.options`), never this object."""

    values: dict[str, Any]

    def options_for(self, cls: type[T]) -> T:
        """`cls`, a part's options dataclass, filled by name: a field is a nested options
        dataclass (filled the same way), else the option of its name, else the property of its
        name (DERIVED). A field that names neither is a TypeError (tests build every part's)."""
        hints = typing.get_type_hints(cls)
        values: dict[str, Any] = {}
        for field in dataclasses.fields(cls):  # type: ignore[arg-type]
            hint = hints[field.name]
            if isinstance(hint, type) and dataclasses.is_dataclass(hint):
                values[field.name] = self.options_for(hint)
            elif field.name in OPTION_BY_NAME:
                values[field.name] = self.values.get(field.name)
            elif field.name in DERIVED:
                values[field.name] = getattr(self, field.name)
            else:
                raise TypeError(f"{cls.__name__}.{field.name} names no option")
        return cls(**values)

    def with_changes(self, **changes: Any) -> "HubConfig":
        return validate({**self.values, **changes})

    @property
    def in_addon(self) -> bool:
        return bool(os.environ.get("SUPERVISOR_TOKEN"))

    @property
    def state_dir(self) -> Path:
        if self.values.get("data_dir"):
            return Path(self.values["data_dir"])
        if self.in_addon:
            return Path("/data")
        return Path(os.environ.get("XDG_STATE_HOME", Path.home() / ".local" / "state")) / "bolt-hub"


def validate(raw: dict[str, Any]) -> HubConfig:
    cleaned = {k: v for k, v in raw.items() if not (v is None or v == "")}
    try:
        values = SCHEMA(cleaned)
    except vol.MultipleInvalid as err:
        problems = "; ".join(_describe(e) for e in err.errors)
        raise ConfigError(f"invalid options: {problems}") from None
    if mistakes := _model_source_problems(values.get("model_repo"), values.get("model_file")):
        raise ConfigError(f"invalid options: {'; '.join(mistakes)}")
    return HubConfig(values)


_REPO_PART = re.compile(r"^[A-Za-z0-9](?:[\w.-]{0,94}[A-Za-z0-9_])?$")  # as huggingface.co names them
_FILE_PART = re.compile(r"^[^\x00-\x1f\\:*?\"<>|]+$")


def _model_source_problems(repo: str | None, filename: str | None) -> list[str]:
    """A Hugging Face repository as owner/name, and a file in it as a relative path with `/`:
    anything else would reach outside the models folder or be refused by the hub later."""
    problems = []
    parts = repo.split("/") if repo else []
    if repo and (len(parts) != 2 or not all(_REPO_PART.match(p) and ".." not in p and "--" not in p for p in parts)):
        problems.append(f"model_repo: {repo!r} is not a Hugging Face repository: write it as owner/name, "
                        "e.g. ggml-org/gemma-4-E4B-it-GGUF (no URL, no spaces)")
    steps = filename.split("/") if filename else []
    if filename and ("\\" in filename or filename.startswith("/")
                     or not all(s not in ("", ".", "..") and _FILE_PART.match(s) for s in steps)):
        problems.append(f"model_file: {filename!r} is not a file of the repository: write its path in the "
                        "repository with / (e.g. name-Q4_K_M.gguf or Q4_K_M/name.gguf), no .., no absolute "
                        "path, no backslash")
    return problems


def _describe(error: vol.Invalid) -> str:
    where = ".".join(str(p) for p in error.path) or "options"
    if error.error_message == "extra keys not allowed":
        return f"{where}: unknown option"
    return f"{where}: {error.error_message}"


def env_overrides(environ: dict[str, str] | None = None) -> dict[str, Any]:
    environ = dict(os.environ) if environ is None else environ
    found = {}
    for option in OPTIONS:
        key = env_name(option.name)
        if key in environ:
            found[option.name] = environ[key]
    return found


def load_file(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise ConfigError(f"cannot read config file {path}: {err.strerror}") from None
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as err:
        raise ConfigError(f"config file {path} is not valid {path.suffix.lstrip('.') or 'YAML'}: {err}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path} must hold a mapping of options")
    return data


def load(config_path: Path | None = None, environ: dict[str, str] | None = None, **overrides: Any) -> HubConfig:
    """Defaults < file (explicit path, else the add-on's options.json if present) < env < overrides."""
    raw: dict[str, Any] = {}
    if config_path is not None:
        raw.update(load_file(config_path))
    elif ADDON_OPTIONS_PATH.exists():
        raw.update(load_file(ADDON_OPTIONS_PATH))
    raw.update(env_overrides(environ))
    raw.update({k: v for k, v in overrides.items() if v is not None})
    return validate(raw)


def addon_options_and_schema() -> tuple[dict[str, Any], dict[str, str]]:
    """The `options` and `schema` sections that config.yaml must carry: every required option's
    default, and the add-on's own defaults."""
    options = {o.name: o.addon_default if o.addon_default is not None else o.default
               for o in OPTIONS if not o.type.endswith("?") or o.addon_default is not None}
    schema = {o.name: o.type for o in OPTIONS}
    return options, schema
