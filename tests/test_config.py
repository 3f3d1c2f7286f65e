"""The option table, the add-on manifest and option loading agree and fail clearly."""

from __future__ import annotations

import dataclasses
import json
import typing
from pathlib import Path

import pytest
import yaml

from hub import config
from hub.cli import CliOptions
from hub.options import HubOptions, hub_options

ROOT = Path(__file__).resolve().parents[1]


def manifest() -> dict:
    return yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))


def test_manifest_schema_matches_option_table() -> None:
    options, schema = config.addon_options_and_schema()
    assert manifest()["schema"] == schema
    assert manifest()["options"] == options


def test_every_manifest_type_is_understood_and_defaults_validate() -> None:
    doc = manifest()
    for name, addon_type in doc["schema"].items():
        config.validator_for(addon_type.rstrip("?"))
    loaded = config.validate(doc["options"])
    for name, default in doc["options"].items():
        assert loaded.values[name] == default


def test_manifest_has_the_addon_keys_supervisor_requires() -> None:
    doc = manifest()
    for key in ("name", "version", "slug", "description", "arch", "options", "schema"):
        assert key in doc
    assert doc["init"] is False
    assert doc["discovery"] == ["wyoming", "bolt_hub"]  # HA's Wyoming agent and the Bolt Hub integration


def test_file_then_env_precedence(tmp_path: Path) -> None:
    path = tmp_path / "options.yaml"
    path.write_text("n_ctx: 4096\nlanguage: de\n")
    loaded = config.load(path, environ={"BOLT_HUB_N_CTX": "2048"})
    assert loaded.values["n_ctx"] == 2048
    assert loaded.values["language"] == "de"
    assert loaded.values.get("ha_url") is None


def test_options_json_is_read(tmp_path: Path) -> None:
    path = tmp_path / "options.json"
    path.write_text(json.dumps({"reasoning": "budget", "reasoning_budget": 64}))
    loaded = config.load(path, environ={})
    assert loaded.values["reasoning"] == "budget" and loaded.values["reasoning_budget"] == 64


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"n_ctx": 10}, "n_ctx"),
        ({"n_ctx": "lots"}, "n_ctx"),
        ({"reasoning": "maybe"}, "reasoning"),
        ({"no_such_option": 1}, "no_such_option: unknown option"),
    ],
)
def test_bad_options_name_the_option(raw: dict, message: str) -> None:
    with pytest.raises(config.ConfigError, match=message):
        config.validate(raw)


def test_broken_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("n_ctx: [unclosed\n")
    with pytest.raises(config.ConfigError, match="not valid"):
        config.load(path, environ={})
    with pytest.raises(config.ConfigError, match="cannot read"):
        config.load(tmp_path / "missing.yaml", environ={})


def _python_type(option: config.Option) -> object:
    base = option.type.rstrip("?")
    kind = {"bool": bool, "port": int, "float": float}.get(base) or (int if base.startswith("int") else str)
    return kind | None if option.type.endswith("?") else kind


def _leaf_fields(cls: type) -> list[tuple[str, str, object]]:
    """(class, field, type) of every option field under `cls`, nested options included."""
    found = []
    for name, hint in typing.get_type_hints(cls).items():
        if dataclasses.is_dataclass(hint):
            found += _leaf_fields(hint)
        else:
            found.append((cls.__name__, name, hint))
    return found


def test_each_parts_options_are_typed_as_the_option_table_says() -> None:
    expected = {**{o.name: _python_type(o) for o in config.OPTIONS}, "state_dir": Path, "in_addon": bool}
    fields = _leaf_fields(HubOptions) + _leaf_fields(CliOptions)
    wrong = [f"{cls}.{name}: {hint} (option: {expected.get(name, 'none')})"
             for cls, name, hint in fields if expected.get(name) != hint]
    assert not wrong
    unread = set(expected) - {name for _, name, _ in fields} - {"data_dir"}  # data_dir: via state_dir
    assert not unread, f"options no part reads: {sorted(unread)}"


def test_parts_get_the_validated_options() -> None:
    loaded = config.validate({"wyoming_port": 10611, "turn_timeout": 7, "mqtt_host": "broker.lan"})
    options = hub_options(loaded)
    assert (options.wyoming.wyoming_port, options.agent.turn_timeout) == (10611, 7)
    assert options.mqtt.broker.mqtt_host == "broker.lan" and options.mqtt.broker.mqtt_port == 1883
    assert options.llm.engine == "local" and options.llm.state_dir == loaded.state_dir


def test_an_options_field_that_names_no_option_fails() -> None:
    @dataclasses.dataclass(frozen=True)
    class Typo:
        turn_timout: int

    with pytest.raises(TypeError, match="Typo.turn_timout names no option"):
        config.validate({}).options_for(Typo)


def test_the_addon_downloads_a_real_model_by_default_and_the_command_line_does_not() -> None:
    """Issue 43: the add-on's first start fetches Gemma 4 E4B (the stand-in serves meanwhile);
    `bolt-hub serve` with no options keeps the stand-in and downloads nothing."""
    addon = config.validate(manifest()["options"])
    assert addon.values["model_repo"] == "ggml-org/gemma-4-E4B-it-GGUF"
    assert addon.values["model_file"] == "gemma-4-E4B-it-Q4_K_M.gguf"
    command_line = config.validate({})
    assert "model_repo" not in command_line.values and "model_file" not in command_line.values
    assert hub_options(command_line).llm.model_repo is None
