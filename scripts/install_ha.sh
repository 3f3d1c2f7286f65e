#!/usr/bin/env bash
# Install Home Assistant core (for the hub's integration tests) into its own Python 3.13 venv.
#
# Idempotent: does nothing when the venv already holds the wanted version and the extra
# integration requirements. Uses the constraints file shipped inside HA's wheel, without which
# the resolver backtracks for many minutes.
#
# Env: HA_VERSION (2025.4.4), HA_VENV (<repo>/.cache/ha-venv), HA_PYTHON (pyenv 3.13.0),
# HA_EXTRA_PACKAGES (more pip requirements, installed under the same constraints; empty).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HA_VERSION="${HA_VERSION:-2025.4.4}"
HA_VENV="${HA_VENV:-$REPO/.cache/ha-venv}"
HA_PYTHON="${HA_PYTHON:-$HOME/.pyenv/versions/3.13.0/bin/python}"
# Integrations the tests load (their requirements are installed up front so that hass can run
# with --skip-pip and never installs anything at run time).
HA_INTEGRATIONS="${HA_INTEGRATIONS:-wyoming mqtt automation conversation onboarding api config template input_boolean demo homeassistant local_todo local_calendar shopping_list}"
HA_EXTRA_PACKAGES="${HA_EXTRA_PACKAGES:-}"
STAMP="$HA_VENV/.bolt-hub-installed"
STAMP_TEXT="$HA_VERSION $HA_INTEGRATIONS${HA_EXTRA_PACKAGES:+ + $HA_EXTRA_PACKAGES}"

if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$STAMP_TEXT" && -x "$HA_VENV/bin/hass" ]]; then
    echo "Home Assistant $HA_VERSION already installed in $HA_VENV"
    exit 0
fi

if [[ ! -x "$HA_PYTHON" ]]; then
    echo "error: Python 3.13 not found at $HA_PYTHON (set HA_PYTHON)" >&2
    exit 1
fi

echo "Installing Home Assistant $HA_VERSION into $HA_VENV"
[[ -x "$HA_VENV/bin/python" ]] || "$HA_PYTHON" -m venv "$HA_VENV"
"$HA_VENV/bin/python" -m pip install --quiet --upgrade pip uv

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
"$HA_VENV/bin/python" -m pip download --quiet --no-deps --dest "$WORK" "homeassistant==$HA_VERSION"
"$HA_VENV/bin/python" - "$WORK" <<'PY'
import pathlib, sys, zipfile
work = pathlib.Path(sys.argv[1])
wheel = next(work.glob("homeassistant-*.whl"))
with zipfile.ZipFile(wheel) as zf:
    (work / "constraints.txt").write_bytes(zf.read("homeassistant/package_constraints.txt"))
PY

UV=("$HA_VENV/bin/uv" pip install --python "$HA_VENV/bin/python" --constraint "$WORK/constraints.txt")
"${UV[@]}" "$WORK"/homeassistant-*.whl

# Requirements of the integrations the tests load, following their dependencies.
# shellcheck disable=SC2086 # one argument per integration
"$HA_VENV/bin/python" - "$WORK/requirements.txt" $HA_INTEGRATIONS <<'PY'
import json, pathlib, sys
import homeassistant.components as components
from homeassistant import bootstrap

root = pathlib.Path(components.__file__).parent
wanted = set(sys.argv[2:])
for name in ("CORE_INTEGRATIONS", "LOGGING_AND_HTTP_DEPS_INTEGRATIONS", "FRONTEND_INTEGRATIONS",
             "RECORDER_INTEGRATIONS", "DEFAULT_INTEGRATIONS", "STAGE_0_INTEGRATIONS"):
    value = getattr(bootstrap, name, ())
    for item in value:
        # STAGE_0_INTEGRATIONS holds (name, integrations, timeout) tuples
        wanted.update(item[1] if isinstance(item, tuple) else [item])
seen: set[str] = set()
requirements: set[str] = set()
while wanted:
    domain = wanted.pop()
    if domain in seen:
        continue
    seen.add(domain)
    manifest_path = root / domain / "manifest.json"
    if not manifest_path.exists():
        continue
    manifest = json.loads(manifest_path.read_text())
    requirements.update(manifest.get("requirements", []))
    wanted.update(manifest.get("dependencies", []))
    wanted.update(manifest.get("after_dependencies", []))
pathlib.Path(sys.argv[1]).write_text("\n".join(sorted(requirements)) + "\n")
print(f"{len(requirements)} requirements for {len(seen)} integrations")
PY
"${UV[@]}" -r "$WORK/requirements.txt"
if [[ -n "$HA_EXTRA_PACKAGES" ]]; then
    # shellcheck disable=SC2086 # one argument per package
    "${UV[@]}" $HA_EXTRA_PACKAGES
fi

"$HA_VENV/bin/python" -c "from homeassistant.const import __version__ as v; assert v == '$HA_VERSION', v"
echo "$STAMP_TEXT" > "$STAMP"
echo "Home Assistant $HA_VERSION installed in $HA_VENV"
