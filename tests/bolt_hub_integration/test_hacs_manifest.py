"""The integration as HACS and hassfest read it (their rules restated from HACS's validation action
and core's script/hassfest/manifest.py and translations.py), and tied to the hub it talks to: its
version is the hub's, its discovery is what the hub announces, and hub/ never imports it."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from string import Formatter
from urllib.parse import urlparse

import pytest
import voluptuous as vol
import yaml
from packaging.version import InvalidVersion, Version

from hub.interfaces.http.discovery import API_SERVICE_TYPE, ApiDiscovery
from hub.locales import SUPPORTED_LANGUAGES

REPO = Path(__file__).resolve().parents[2]
INTEGRATIONS = REPO / "custom_components"
INTEGRATION = INTEGRATIONS / "bolt_hub"
UI_LANGUAGES = ("en", "de", "fr", "es", "nl", "it", "pl", "pt")  # as the add-on's translations/
IOT_CLASSES = ("assumed_state", "calculated", "cloud_polling", "cloud_push", "local_polling", "local_push")
INTEGRATION_TYPES = ("device", "entity", "hardware", "helper", "hub", "service", "system", "virtual")


def version(value: str) -> str:
    try:
        Version(value)
    except InvalidVersion:
        raise vol.Invalid(f"{value!r} is not a version") from None
    return value


def https_url(value: str) -> str:
    if urlparse(value).scheme != "https" or not urlparse(value).netloc:
        raise vol.Invalid(f"{value!r} is not an https URL")
    return value


# hassfest's CUSTOM_INTEGRATION_MANIFEST_SCHEMA (the keys an integration of this kind uses), with
# HACS's requirements on top: issue_tracker, version and codeowners are required
MANIFEST = vol.Schema({
    vol.Required("domain"): str,
    vol.Required("name"): str,
    vol.Required("codeowners"): [vol.Match(r"^@[\w.-]+(/[\w.-]+)?$")],
    vol.Required("config_flow"): True,
    vol.Required("dependencies"): [str],
    vol.Required("documentation"): https_url,
    vol.Required("integration_type"): vol.In(INTEGRATION_TYPES),
    vol.Required("iot_class"): vol.In(IOT_CLASSES),
    vol.Required("issue_tracker"): https_url,
    vol.Optional("requirements"): [str],
    vol.Required("version"): version,
    vol.Optional("zeroconf"): [str],
    vol.Optional("after_dependencies"): [str],
}, extra=vol.PREVENT_EXTRA)
# HACS's hacs.json (the keys it knows)
HACS = vol.Schema({
    vol.Required("name"): str,
    vol.Optional("homeassistant"): version,
    vol.Optional("content_in_root"): bool,
    vol.Optional("country"): vol.Any(str, [str]),
    vol.Optional("filename"): str,
    vol.Optional("hide_default_branch"): bool,
    vol.Optional("persistent_directory"): str,
    vol.Optional("render_readme"): bool,
    vol.Optional("zip_release"): bool,
}, extra=vol.PREVENT_EXTRA)


def manifest() -> dict:
    return json.loads((INTEGRATION / "manifest.json").read_text(encoding="utf-8"))


def translation(language: str) -> dict:
    return json.loads((INTEGRATION / "translations" / f"{language}.json").read_text(encoding="utf-8"))


def leaves(tree: dict, prefix: str = "") -> dict[str, str]:
    found: dict[str, str] = {}
    for key, value in tree.items():
        path = f"{prefix}.{key}" if prefix else key
        found.update(leaves(value, path) if isinstance(value, dict) else {path: value})
    return found


def placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in Formatter().parse(text) if name}


def test_hacs_finds_one_integration_with_its_files() -> None:
    HACS(json.loads((REPO / "hacs.json").read_text(encoding="utf-8")))
    assert [p.name for p in INTEGRATIONS.iterdir() if p.is_dir() and p.name != "__pycache__"] == ["bolt_hub"]
    assert (REPO / "README.md").is_file()
    for name in ("__init__.py", "manifest.json", "config_flow.py", "conversation.py", "diagnostics.py",
                 "strings.json", "translations/en.json"):
        assert (INTEGRATION / name).is_file(), name


def test_the_manifest_passes_hassfest_and_hacs() -> None:
    data = manifest()
    MANIFEST(data)
    assert data["domain"] == INTEGRATION.name
    keys = list(data)
    assert keys[:2] == ["domain", "name"] and keys[2:] == sorted(keys[2:]), "hassfest: domain, name, then a-z"
    assert "conversation" in data["dependencies"]
    assert (INTEGRATION / "manifest.json").read_text(encoding="utf-8").endswith("\n")


def test_the_integrations_version_is_the_hubs() -> None:
    hub_version = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    assert manifest()["version"] == hub_version
    assert yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))["version"] == hub_version
    minimum = re.search(r'MIN_HUB_VERSION: Final = "([^"]+)"', (INTEGRATION / "const.py").read_text())[1]
    assert Version(minimum) <= Version(hub_version), "the integration speaks to the hub it ships with"


def test_it_discovers_what_the_hub_announces() -> None:
    assert manifest()["zeroconf"] == [API_SERVICE_TYPE]
    assert ApiDiscovery.service == manifest()["domain"], "the Supervisor hands the add-on's discovery to it"
    assert manifest()["domain"] in yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))["discovery"]


def test_strings_are_english_and_every_ui_language_says_all_of_it() -> None:
    english = json.loads((INTEGRATION / "strings.json").read_text(encoding="utf-8"))
    assert translation("en") == english, "custom integrations ship translations/en.json: the same strings"
    for language in UI_LANGUAGES:
        texts, reference = leaves(translation(language)), leaves(english)
        assert texts.keys() == reference.keys(), language
        for key, text in texts.items():
            assert text.strip(), (language, key)
            assert placeholders(text) == placeholders(reference[key]), (language, key, text)


@pytest.mark.parametrize("language", [language for language in SUPPORTED_LANGUAGES if language != "en"])
def test_a_hub_that_is_down_is_said_in_each_of_the_hubs_languages(language: str) -> None:
    """Every language the hub speaks has the spoken errors (the UI languages have the rest too)."""
    english, said = leaves(translation("en")), leaves(translation(language))
    spoken = [key for key in english if key.startswith("exceptions.")]
    assert spoken and all(said.get(key) and said[key] != english[key] for key in spoken), language
    if language not in UI_LANGUAGES:
        assert said.keys() == set(spoken), f"{language}.json holds the spoken errors alone"


def test_no_translation_is_for_a_language_the_hub_does_not_speak() -> None:
    files = {path.stem for path in (INTEGRATION / "translations").glob("*.json")}
    assert files == set(SUPPORTED_LANGUAGES)


def test_every_key_the_code_uses_has_its_words() -> None:
    strings = json.loads((INTEGRATION / "strings.json").read_text(encoding="utf-8"))
    client = (INTEGRATION / "hub_client.py").read_text(encoding="utf-8")
    flow = (INTEGRATION / "config_flow.py").read_text(encoding="utf-8")
    error_keys = set(re.findall(r'^    key = "(\w+)"', client, re.M))
    assert {"unreachable", "invalid_auth", "unsupported_version", "not_a_hub", "failed"} <= error_keys
    assert error_keys | {"invalid_url"} <= strings["config"]["error"].keys()
    assert error_keys <= strings["exceptions"].keys(), "each failure is said in words"
    steps = set(re.findall(r'step_id="(\w+)"', flow))
    assert steps - {"init"} <= strings["config"]["step"].keys() and "init" in strings["options"]["step"]
    reasons = set(re.findall(r'reason="(\w+)"', flow)) | {"already_configured", "reauth_successful"}
    assert reasons <= strings["config"]["abort"].keys()


def test_hub_never_imports_the_integration() -> None:
    importing = [str(path.relative_to(REPO)) for path in (REPO / "hub").rglob("*.py")
                 if re.search(r"^\s*(from|import)\s+custom_components", path.read_text(encoding="utf-8"), re.M)]
    assert importing == []
