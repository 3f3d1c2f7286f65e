"""config.yaml, build.yaml and translations/ as Home Assistant's Supervisor validates them.

The rules restate Supervisor's `supervisor/addons/validate.py`, `addons/options.py` and
`validate.py` (read from its source): required keys, slug, arch, startup/boot values, port
maps, volume maps, services, the schema element grammar (note: ranges take unsigned numbers
only), options against the schema, translations and build base images.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import voluptuous as vol
import yaml

import hub
from hub import config as hub_config

ROOT = Path(__file__).resolve().parents[2]

ARCHES = ("armhf", "armv7", "aarch64", "amd64", "i386")
SLUG = re.compile(r"^[-_.A-Za-z0-9]+$")
DOCKER_PORT = re.compile(r"^\d+(?:/tcp|/udp)?$")
VOLUME = re.compile(r"^(data|config|ssl|addons|backup|share|media|homeassistant_config|"
                    r"all_addon_configs|addon_config)(?::(rw|ro))?$")
SERVICE = re.compile(r"^(mqtt|mysql):(provide|want|need)$")
DOCKER_IMAGE = re.compile(r"^([a-zA-Z\-\.:\d{}]+/)*?([\-\w{}]+)/([\-\w{}]+)$")  # no tag
WATCHDOG = re.compile(r"^(?:https?|\[PROTO:\w+\]|tcp):\/\/\[HOST\]:(\[PORT:\d+\]|\d+).*$")
BUILD_IMAGE = re.compile(r"^([a-zA-Z\-\.:\d{}]+/)*?([\-\w{}]+)/([\-\w{}]+)(:[\.\-\w{}]+)?$")
# Supervisor's option types; a range bound is digits only (int(-1,5) is not a type it knows)
SCHEMA_ELEMENT = re.compile(
    r"^(?:bool|email|url|port"
    r"|device(?:\(subsystem=[a-z]+\))?"
    r"|str(?:\((?P<s_min>\d+)?,(?P<s_max>\d+)?\))?"
    r"|password(?:\((?P<p_min>\d+)?,(?P<p_max>\d+)?\))?"
    r"|int(?:\((?P<i_min>\d+)?,(?P<i_max>\d+)?\))?"
    r"|float(?:\((?P<f_min>[\d.]+)?,(?P<f_max>[\d.]+)?\))?"
    r"|match\((?P<match>.*)\)"
    r"|list\((?P<list>.+)\))\??$"
)
network_port = vol.All(vol.Coerce(int), vol.Range(min=1, max=65535))

ADDON_CONFIG = vol.Schema({
    vol.Required("name"): str,
    vol.Required("version"): vol.Coerce(str),
    vol.Required("slug"): vol.Match(SLUG),
    vol.Required("description"): str,
    vol.Required("arch"): [vol.In(ARCHES)],
    vol.Optional("url"): vol.Url(),
    vol.Optional("startup"): vol.In(["initialize", "system", "services", "application", "once"]),
    vol.Optional("boot"): vol.In(["auto", "manual", "manual_only"]),
    vol.Optional("init"): bool,
    vol.Optional("ports"): {vol.Match(DOCKER_PORT): vol.Maybe(network_port)},
    vol.Optional("ports_description"): {vol.Match(DOCKER_PORT): str},
    vol.Optional("ingress"): bool,
    vol.Optional("ingress_port"): vol.Any(network_port, 0),
    vol.Optional("ingress_entry"): str,
    vol.Optional("panel_icon"): str,
    vol.Optional("panel_title"): str,
    vol.Optional("homeassistant_api"): bool,
    vol.Optional("hassio_api"): bool,
    vol.Optional("host_network"): bool,
    vol.Optional("map"): [vol.Match(VOLUME)],
    vol.Optional("services"): [vol.Match(SERVICE)],
    vol.Optional("discovery"): [str],
    vol.Optional("options"): dict,
    vol.Optional("schema"): {str: vol.Match(SCHEMA_ELEMENT)},
    vol.Optional("image"): vol.Match(DOCKER_IMAGE),
    vol.Optional("watchdog"): vol.Match(WATCHDOG),
    vol.Optional("timeout"): vol.All(int, vol.Range(min=10, max=300)),
}, extra=vol.PREVENT_EXTRA)  # stricter than Supervisor (which drops unknown keys): catches typos

TRANSLATION = vol.Schema({
    vol.Optional("configuration"): {str: {vol.Required("name"): str, vol.Optional("description"): vol.Maybe(str)}},
    vol.Optional("network"): {str: str},
}, extra=vol.PREVENT_EXTRA)


def load(name: str) -> dict:
    return yaml.safe_load((ROOT / name).read_text(encoding="utf-8"))


def supervisor_validator(addon_type: str):
    """What Supervisor applies to an option value of this type."""
    match = SCHEMA_ELEMENT.match(addon_type)
    assert match, addon_type
    bounds = {name[2:]: float(value) for name, value in match.groupdict().items()
              if name[1:2] == "_" and value}
    base = addon_type.rstrip("?")
    if base.startswith(("str", "password")):
        return vol.All(str, vol.Length(**{k: int(v) for k, v in bounds.items()}))
    if base.startswith("int"):
        return vol.All(vol.Coerce(int), vol.Range(**bounds))
    if base.startswith("float"):
        return vol.All(vol.Coerce(float), vol.Range(**bounds))
    if base.startswith("bool"):
        return vol.Boolean()
    if base.startswith("port"):
        return network_port
    if base.startswith("list"):
        return vol.In(match.group("list").split("|"))
    if base.startswith("match"):
        return vol.Match(match.group("match"))
    return str


def test_config_yaml_passes_supervisors_addon_schema():
    ADDON_CONFIG(load("config.yaml"))


@pytest.mark.parametrize("name,addon_type", sorted(load("config.yaml")["schema"].items()))
def test_every_option_type_is_one_supervisor_knows(name, addon_type):
    assert SCHEMA_ELEMENT.match(addon_type), (
        f"{name}: {addon_type!r} is not an add-on option type Supervisor accepts "
        "(ranges take unsigned numbers: int(0,999), not int(-1,999))")


def test_options_are_in_the_schema_and_every_required_option_has_a_default():
    manifest = load("config.yaml")
    options, schema = manifest["options"], manifest["schema"]
    assert set(options) <= set(schema)
    required = {name for name, kind in schema.items() if not kind.endswith("?")}
    assert required <= set(options), f"required options without a default: {required - set(options)}"
    for name, value in options.items():
        supervisor_validator(schema[name])(value)
        # the hub's own validation of the same value agrees
        hub_config.validator_for(schema[name].rstrip("?"))(value)


def test_ports_descriptions_and_ingress_agree():
    manifest = load("config.yaml")
    ports, described = manifest["ports"], manifest["ports_description"]
    assert set(ports) == set(described)
    options = manifest["options"]
    assert f"{options['wyoming_port']}/tcp" in ports
    assert f"{options['http_port']}/tcp" in ports
    assert manifest["ingress"] is True and manifest["ingress_port"] == options["http_port"]


def test_version_is_the_same_everywhere():
    version = str(load("config.yaml")["version"])
    assert version == hub.__version__
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    newest = re.search(r"^## \[?(\d+\.\d+\.\d+)", changelog, re.MULTILINE)
    assert newest and newest.group(1) == version


def test_build_yaml_has_a_base_image_for_every_arch():
    build = load("build.yaml")
    arches = set(load("config.yaml")["arch"])
    assert set(build["build_from"]) == arches
    for arch, image in build["build_from"].items():
        assert BUILD_IMAGE.match(image) and arch in image
    assert all(isinstance(v, str) for v in build.get("labels", {}).values())


@pytest.mark.parametrize("path", sorted((ROOT / "translations").glob("*.yaml")), ids=lambda p: p.name)
def test_translations_follow_supervisors_schema(path):
    manifest = load("config.yaml")
    translation = TRANSLATION(yaml.safe_load(path.read_text(encoding="utf-8")))
    assert set(translation.get("configuration", {})) <= set(manifest["schema"])
    assert set(translation.get("network", {})) <= set(manifest["ports"])


def test_english_translation_names_every_option():
    english = TRANSLATION(load("translations/en.yaml"))
    assert set(english["configuration"]) == set(load("config.yaml")["schema"])


def test_a_negative_range_is_rejected_by_the_rules():
    # the rule set itself must be able to fail
    assert not SCHEMA_ELEMENT.match("int(-1,999)")
    assert SCHEMA_ELEMENT.match("int(0,999)") and SCHEMA_ELEMENT.match("password?")
    with pytest.raises(vol.Invalid):
        ADDON_CONFIG({**load("config.yaml"), "slug": "bolt hub"})
    with pytest.raises(vol.Invalid):
        ADDON_CONFIG({**load("config.yaml"), "arch": ["x86_64"]})


def test_docs_describe_every_option():
    docs = (ROOT / "DOCS.md").read_text(encoding="utf-8")
    missing = [name for name in load("config.yaml")["schema"] if f"| `{name}` |" not in docs]
    assert not missing, f"DOCS.md's option table lacks {missing}"
