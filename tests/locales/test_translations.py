"""The add-on's config UI translations cover every option and port, and nothing else."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from hub import config

ROOT = Path(__file__).resolve().parents[2]
TRANSLATIONS = ROOT / "translations"
REQUIRED_LANGUAGES = ("en", "de", "fr", "es", "nl", "it", "pl", "pt")


def option_names() -> set[str]:
    return {option.name for option in config.OPTIONS}


def manifest_ports() -> set[str]:
    manifest = yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))
    return set((manifest.get("ports") or {}).keys())


def load(path: Path) -> dict:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(doc, dict), f"{path.name} must be a mapping"
    return doc


def problems(doc: dict, options: set[str], ports: set[str]) -> list[str]:
    """Everything wrong with one translation file, as readable messages."""
    found: list[str] = []
    unknown_sections = set(doc) - {"configuration", "network"}
    if unknown_sections:
        found.append(f"unknown sections {sorted(unknown_sections)}")
    configuration = doc.get("configuration") or {}
    network = doc.get("network") or {}
    found += [f"option {name!r} has no translation" for name in sorted(options - set(configuration))]
    found += [f"translation for unknown option {name!r}" for name in sorted(set(configuration) - options)]
    for name, entry in configuration.items():
        if not isinstance(entry, dict) or set(entry) != {"name", "description"}:
            found.append(f"option {name!r} needs exactly name and description")
            continue
        for field in ("name", "description"):
            if not isinstance(entry[field], str) or not entry[field].strip():
                found.append(f"option {name!r} has an empty {field}")
    found += [f"port {port!r} has no network entry" for port in sorted(ports - set(network))]
    found += [f"network entry for unknown port {port!r}" for port in sorted(set(network) - ports)]
    for port, text in network.items():
        if not isinstance(text, str) or not text.strip():
            found.append(f"port {port!r} has an empty description")
    return found


def test_required_languages_exist() -> None:
    present = {path.stem for path in TRANSLATIONS.glob("*.yaml")}
    assert set(REQUIRED_LANGUAGES) <= present, f"missing {sorted(set(REQUIRED_LANGUAGES) - present)}"


@pytest.mark.parametrize("path", sorted(TRANSLATIONS.glob("*.yaml")), ids=lambda p: p.stem)
def test_translation_covers_every_option_and_port(path: Path) -> None:
    assert problems(load(path), option_names(), manifest_ports()) == []


@pytest.mark.parametrize("language", [lang for lang in REQUIRED_LANGUAGES if lang != "en"])
def test_translation_is_not_a_copy_of_english(language: str) -> None:
    english = load(TRANSLATIONS / "en.yaml")["configuration"]
    other = load(TRANSLATIONS / f"{language}.yaml")["configuration"]
    same = [name for name in english if english[name]["description"] == other[name]["description"]]
    assert not same, f"{language}: descriptions still in English: {same}"


def test_checker_reports_each_kind_of_mistake() -> None:
    doc = copy.deepcopy(load(TRANSLATIONS / "en.yaml"))
    del doc["configuration"]["language"]
    doc["configuration"]["no_such_option"] = {"name": "X", "description": "Y"}
    doc["configuration"]["threads"]["description"] = "  "
    doc["configuration"]["n_ctx"]["name"] = ""
    doc["configuration"]["temperature"] = {"name": "Temperature"}
    del doc["network"]["8099/tcp"]
    doc["network"]["1234/udp"] = "stray"
    found = problems(doc, option_names(), manifest_ports())
    assert found == [
        "option 'language' has no translation",
        "translation for unknown option 'no_such_option'",
        "option 'n_ctx' has an empty name",
        "option 'threads' has an empty description",
        "option 'temperature' needs exactly name and description",
        "port '8099/tcp' has no network entry",
        "network entry for unknown port '1234/udp'",
    ]


def test_checker_sees_a_new_option_without_translation() -> None:
    doc = load(TRANSLATIONS / "de.yaml")
    assert problems(doc, option_names() | {"brand_new_option"}, manifest_ports()) == [
        "option 'brand_new_option' has no translation"
    ]
