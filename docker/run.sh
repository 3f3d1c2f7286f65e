#!/usr/bin/env bash
# Starts the hub in a container. In the Home Assistant add-on, `bolt-hub serve` reads
# /data/options.json itself (and SUPERVISOR_TOKEN tells it it runs as an add-on); elsewhere it
# takes BOLT_HUB_<OPTION> environment variables or a file passed with --config.
set -euo pipefail

if [ -f /data/options.json ]; then
  echo "[bolt-hub] add-on options: /data/options.json"
fi
if [ -n "${BOLT_HUB_CONFIG:-}" ]; then
  exec bolt-hub --config "${BOLT_HUB_CONFIG}" serve "$@"
fi
exec bolt-hub serve "$@"
