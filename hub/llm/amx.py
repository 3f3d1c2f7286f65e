"""Whether llama.cpp's extra buffer types (Intel AMX, repacked weights) work in this process.

On a CPU that lists AMX, llama.cpp multiplies with tile instructions. Some sandboxes (gVisor, as
on this project's build machines) let the process ask for the tile state and then fault on the
first tile instruction inside llama.cpp: every evaluation dies with SIGILL, taking the hub with
it. So on such a CPU a child process evaluates a short batch with the model once; when it dies, the
engine loads the model without the extra buffer types (plain CPU kernels, which run anywhere).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import subprocess
import sys
from pathlib import Path
from typing import Iterator

from hub.llm.llama_internals import without_extra_buffer_types

_LOGGER = logging.getLogger(__name__)

_PROBE = """
import sys
from llama_cpp import Llama
llm = Llama(sys.argv[1], n_ctx=128, n_threads=1, verbose=False)
llm.eval(llm.tokenize(b"one two three four " * 16)[:96])  # a batch: one token takes other kernels
print("ok")
"""


@functools.cache
def extra_buffers_fail(model: Path) -> bool:
    """True when the CPU lists AMX and evaluating `model` with llama.cpp's defaults dies here."""
    try:
        if "amx_tile" not in Path("/proc/cpuinfo").read_text():
            return False
    except OSError:
        return False
    try:
        probe = subprocess.run([sys.executable, "-c", _PROBE, str(model)], capture_output=True, text=True,
                               timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return False  # no verdict: keep llama.cpp's defaults
    if probe.stdout.strip() == "ok":
        return False
    _LOGGER.warning("llama.cpp's AMX kernels fail here (exit %s): running without extra buffer types",
                    probe.returncode)
    return True


@contextlib.contextmanager
def without_extra_buffers(off: bool) -> Iterator[None]:
    """While loading a `Llama`: without the extra buffer types when `off`."""
    if not off:
        yield
        return
    with without_extra_buffer_types():
        yield
