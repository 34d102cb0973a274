"""Suite processes still running: what a session that ended must not leave behind.

A process is ours when its environment carries a marker that the session which started it
set (every worker inherits it, forked or spawned); another session on the same machine (a
soak, a second run) has workers too, which are not ours. No TensorFlow here.
"""

from __future__ import annotations

import os
from pathlib import Path

# Every process the suite starts runs one of these (a forked one has its zygote's command line).
SUITE_MODULES = (b"tfperf.worker", b"tfperf.processes.zygote", b"tfperf.cases.catalog")


def running(name: str, value: str) -> list[int]:
    """Pids of suite processes whose environment holds name=value."""
    marker = f"{name}={value}".encode()
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            environ = (proc / "environ").read_bytes()
        except OSError:
            continue
        if marker in environ.split(b"\0") and any(m in cmdline for m in SUITE_MODULES):
            pids.append(int(proc.name))
    return pids
