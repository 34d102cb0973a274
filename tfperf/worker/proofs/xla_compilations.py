"""Count a worker's XLA compilations without a profiler.

TensorFlow's persistent XLA cache, pointed at an empty folder of the worker's own, gains one
file per compilation, for `jit_compile` and auto-clustering alike. Counting costs a directory
listing, so the count can bracket the measured rounds without disturbing them (a profiler
would). Its price is paid at compile time: each compilation is also serialised to the folder.

The folder starts empty, so no compilation is replaced by a load from an earlier worker. One
thing escapes the count: a program this worker already compiled, evicted from TensorFlow's
in-memory cache and needed again, is loaded from the folder, not compiled, and not counted.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import MutableMapping
from pathlib import Path

from tfperf.processes.protocol import XLA_COMPILATIONS_ENV

FLAG = "--tf_xla_persistent_cache_directory"


def enable(environ: MutableMapping[str, str], directory: Path) -> None:
    """Must run before TensorFlow is imported: it reads TF_XLA_FLAGS once."""
    flags = environ.get("TF_XLA_FLAGS", "")
    environ["TF_XLA_FLAGS"] = f"{flags} {FLAG}={directory}".strip()


def count(directory: Path) -> int:
    return sum(1 for _ in directory.glob("xla_compile_cache_*"))


def task_folder(address: str) -> Path:
    """Where the cluster task at `address` (host:port) counts its compilations: under the
    folder the launcher gives every task of a local cluster, or else the temporary folder,
    which on a cluster of several machines must be storage the chief shares."""
    root = Path(os.environ.get(XLA_COMPILATIONS_ENV) or tempfile.gettempdir())
    return root / f"tfperf-xla-compilations-{address.replace(':', '_')}"
