"""No token, password or key is ever shown when the objects holding one are formatted (a log line,
an error, a debugger): every option typed `password` is left out of its dataclass's repr, and so
are the tokens the parts build from them (issue 42 F5: `ModelSource` and `EngineOptions` would
have printed `hf_token` and `remote_api_key`)."""

from __future__ import annotations

from pathlib import Path

from hub.backends.ha.client import HAEndpoint
from hub.cli import CliOptions
from hub.config import OPTIONS, validate
from hub.custom.loader import parse_secrets
from hub.custom.tool_base import ToolDeps
from hub.home.entities import EntityStore
from hub.home.policy import ActionPolicy
from hub.hub_client import RunningHub
from hub.llm.factory import download_source
from hub.options import hub_options
from hub.transport.mqtt_broker import BrokerSettings


def test_no_secret_shows_in_any_formatted_options_or_source(tmp_path: Path) -> None:
    secrets = {o.name: f"SECRET-{o.name}-4711" for o in OPTIONS if o.type.startswith("password")}
    assert {"hf_token", "remote_api_key", "api_token", "ha_token", "mqtt_password", "tool_secrets"} <= set(secrets)
    secrets["tool_secrets"] = "door_code=SECRET-tool-4711"
    config = validate({**secrets, "data_dir": str(tmp_path), "model_repo": "owner/name-GGUF",
                       "model_file": "name.gguf", "ha_url": "http://ha.local:8123"})
    options = hub_options(config)
    source = download_source(options.llm)
    assert source is not None and source.token == secrets["hf_token"]  # there, yet never shown
    shown = [options, config.options_for(CliOptions), source, options.llm,
             HAEndpoint.from_options(options.home_assistant), RunningHub("http://127.0.0.1:8099", "SECRET-run-4711"),
             BrokerSettings("broker", password="SECRET-broker-4711"),
             ToolDeps(parse_secrets(secrets["tool_secrets"]), ActionPolicy(), reporter=None, entities=EntityStore())]  # type: ignore[arg-type]
    for thing in shown:
        for text in (repr(thing), str(thing), f"{thing}", f"{thing!r}"):
            assert "SECRET" not in text and "4711" not in text, text
