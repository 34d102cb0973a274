"""The workload catalog kept by what it was read from, as asv keeps its benchmarks.json.

Reading a folder costs a process that imports TensorFlow (4.5-7 s on two cores), and every
session that runs no case pays it in full: a listing, a plan, a bisection's selection check,
a session stopped by a bad option. What the catalog says follows from the folder's Python
files, the harness that reads them and the Python and TensorFlow that import them, so those
are the key: a change to any of them reads the folder again. A folder that cannot be read is
never kept (its error is said afresh, with its log).

Kept under $XDG_CACHE_HOME/tfperf/catalog (~/.cache by default), so that the same workloads
in another checkout or another project are read once. A file that cannot be read or written
is ignored: the folder is read as if nothing were kept.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import os
import sys
import tempfile
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

import tfperf

FORMAT = "tfperf-catalog-2"  # 2: workloads have a version


def folder() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base, "tfperf", "catalog")


def _hash_files(digest: Any, root: Path, files: Iterable[Path]) -> None:
    for path in sorted(files):
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")


def _python_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*.py") if "__pycache__" not in p.parts]


@cache
def _harness_key() -> str:
    """The harness, the interpreter and the frameworks that read every folder: once a process."""
    digest = hashlib.sha256(FORMAT.encode())
    package = Path(tfperf.__file__).resolve().parent
    _hash_files(digest, package, _python_files(package))
    digest.update(os.path.realpath(sys.executable).encode())
    for name in ("tensorflow", "tensorflow-cpu", "keras"):
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            digest.update(f"{name}=={importlib.metadata.version(name)}".encode())
    return digest.hexdigest()


def key(directory: Path) -> str:
    digest = hashlib.sha256(_harness_key().encode())
    _hash_files(digest, directory, _python_files(directory))
    return digest.hexdigest()


def load(directory: Path) -> list[dict[str, Any]] | None:
    """The workloads kept for this folder's files, their paths in this folder; None if none."""
    try:
        kept = json.loads((folder() / f"{key(directory)}.json").read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(kept, dict) or kept.get("format") != FORMAT:
        return None
    base = directory.resolve()
    return [{**data, "path": str(base / data["path"])} for data in kept["workloads"]]


def keep(directory: Path, workloads: list[dict[str, Any]]) -> None:
    """Keep what was read, by file name (the same files elsewhere give the same catalog)."""
    names = [{**data, "path": Path(data["path"]).name} for data in workloads]
    target = folder() / f"{key(directory)}.json"
    with contextlib.suppress(OSError):
        target.parent.mkdir(parents=True, exist_ok=True)
        # Written whole, then renamed: a session reading it at the same time sees all or none.
        with tempfile.NamedTemporaryFile("w", dir=target.parent, delete=False,
                                         suffix=".tmp") as out:
            json.dump({"format": FORMAT, "workloads": names}, out)
        os.replace(out.name, target)
