"""The option table, the add-on manifest and option loading agree and fail clearly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from hub import config

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
    assert doc["discovery"] == ["wyoming"]


def test_file_then_env_precedence(tmp_path: Path) -> None:
    path = tmp_path / "options.yaml"
    path.write_text("n_ctx: 4096\nlanguage: de\n")
    loaded = config.load(path, environ={"BOLT_HUB_N_CTX": "2048"})
    assert loaded.n_ctx == 2048
    assert loaded.language == "de"
    assert loaded.ha_url is None


def test_options_json_is_read(tmp_path: Path) -> None:
    path = tmp_path / "options.json"
    path.write_text(json.dumps({"reasoning": "budget", "reasoning_budget": 64}))
    loaded = config.load(path, environ={})
    assert loaded.reasoning == "budget" and loaded.reasoning_budget == 64


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
