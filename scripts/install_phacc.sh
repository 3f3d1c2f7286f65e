#!/usr/bin/env bash
# The venv that runs the Home Assistant integration's own tests (tests/bolt_hub_integration/phacc):
# Home Assistant with pytest-homeassistant-custom-component, in Python 3.13 as HA needs.
#
# pytest-homeassistant-custom-component 0.13.236 is the newest release that pins an HA this
# machine's Python 3.13.0 runs (homeassistant==2025.4.4; 0.13.237 pins 2025.5.0b0, which needs
# Python 3.13.2+). Idempotent, like scripts/install_ha.sh, which does the work.
#
# Env: PHACC_VENV (<repo>/.cache/phacc-venv), HA_PYTHON (pyenv 3.13.0).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PHACC_VERSION="0.13.236"
HA_VERSION="2025.4.4" \
HA_VENV="${PHACC_VENV:-$REPO/.cache/phacc-venv}" \
HA_INTEGRATIONS="conversation intent assist_pipeline diagnostics homeassistant" \
HA_EXTRA_PACKAGES="pytest-homeassistant-custom-component==$PHACC_VERSION" \
    "$REPO/scripts/install_ha.sh"
