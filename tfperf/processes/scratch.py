"""Scratch folders the session makes for its workers, clusters and numerics arms.

Each is removed by whoever made it when it is done with it. A session killed outright
(SIGKILL: a job's timeout, `tfperf-bisect` ending its running step) runs no cleanup, so each
folder's name carries the pid of the process that made it, and a session that starts removes
the folders whose maker is gone. No TensorFlow here.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

PREFIX = "tfperf-"
# tfperf-<kind>-<maker's pid>-<mkdtemp's random part, which holds no "-">
_NAME = re.compile(rf"^{PREFIX}[a-z][a-z-]*-(\d+)-[^-]+$")


def make(kind: str) -> Path:
    """A new scratch folder of this process (mode 0700, as mkdtemp makes it)."""
    return Path(tempfile.mkdtemp(prefix=f"{PREFIX}{kind}-{os.getpid()}-"))


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # another user's process: alive
        return False
    return False


def sweep(root: Path | None = None) -> list[Path]:
    """Remove this user's scratch folders whose maker is no longer running; what was removed.
    A folder of a live process, another user's, or named otherwise is left alone (a reused pid
    keeps its folder until that process ends too)."""
    removed = []
    for path in (root or Path(tempfile.gettempdir())).glob(f"{PREFIX}*"):
        found = _NAME.match(path.name)
        if found is None:
            continue
        try:
            mine = path.is_dir() and path.stat().st_uid == os.getuid()
        except OSError:
            continue
        if mine and _gone(int(found.group(1))):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed
