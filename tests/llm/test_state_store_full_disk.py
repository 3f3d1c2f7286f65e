"""A prefix state that cannot be written whole (here a file-size limit, as a full disk would cut it)
leaves no partial `.tmp` behind: 0.6.0 left 3 MB of it, which kept the disk full (issue #30 item 5)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SAVE_UNDER_A_1_MIB_LIMIT = """
import resource, signal, sys
from pathlib import Path
import numpy as np
from hub.llm.state_store import StateStore
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
store = StateStore(Path(sys.argv[1]), "model", "chatml", max_bytes=64 << 20)
saved = store.save("stable", np.arange(100, dtype=np.intc), np.ones(3 << 20, dtype=np.uint8))
print("saved" if saved else "not saved")
"""


def test_a_state_cut_short_by_a_full_disk_leaves_no_partial_file(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-c", SAVE_UNDER_A_1_MIB_LIMIT, str(tmp_path)],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "not saved"
    assert "could not save a prefix state" in run.stderr
    assert list(tmp_path.iterdir()) == []
