"""llama-cpp-python's OpenAI-compatible server, loading the model as the hub's engine does.

`python -m llama_cpp.server` on a CPU where llama.cpp's extra buffer types fail (see `amx.py`)
dies with SIGILL on the first request. This runs the same server, same options, with the model
loaded without them there:

    python -m hub.llm.serve_model --model PATH [llama_cpp.server's other options]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from llama_cpp.server.__main__ import main

from hub.llm.amx import extra_buffers_fail, without_extra_buffers


def serve() -> None:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--model")
    model = parser.parse_known_args()[0].model
    # The whole run: the server loads its model at start, and again when a request swaps models.
    with without_extra_buffers(model is not None and extra_buffers_fail(Path(model))):
        main()


if __name__ == "__main__":
    serve()
