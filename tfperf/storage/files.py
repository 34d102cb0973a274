"""Writing stored results safely: whole files or nothing, never over an existing file, and one
writer at a time where a number is chosen.

A reader never sees half a file (it is written under a temporary name, flushed, then linked
into place), and a crash or SIGKILL mid-write leaves at most a stray temporary file.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from tfperf.storage.errors import StorageError


def _temporary(path: Path, data: Any) -> Path:
    return _temporary_lines(path, [json.dumps(data, indent=1, sort_keys=True) + "\n"])


def _temporary_lines(path: Path, lines: Iterable[str]) -> Path:
    """The lines, written under a temporary name beside `path` and flushed to disk; streamed,
    so that a file larger than memory (an export of a year's store) is never held whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "w", encoding="utf-8", newline="") as f:
            f.writelines(lines)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return temporary


def _sync_folder(folder: Path) -> None:
    with contextlib.suppress(OSError):  # make the new name durable too
        directory = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)


def write_new(path: Path, data: Any) -> None:
    """Write JSON to `path`, which must not exist yet: an existing file is never replaced."""
    _link_new(_temporary(path, data), path)


def write_new_lines(path: Path, lines: Iterable[str]) -> None:
    """Write the lines to `path`, which must not exist yet, as write_new writes JSON."""
    _link_new(_temporary_lines(path, lines), path)


def _link_new(temporary: Path, path: Path) -> None:
    try:
        os.link(temporary, path)  # fails if the name is taken, unlike os.replace
    except FileExistsError:
        raise StorageError(f"{path} already exists; stored files are never overwritten") from None
    finally:
        temporary.unlink()
    _sync_folder(path.parent)


def write_growing(path: Path, data: Any) -> None:
    """Replace a file this process owns (a session's own results, rewritten as each case
    ends) in one step: a reader, or a SIGKILL, sees the old whole file or the new one."""
    os.replace(_temporary(path, data), path)
    _sync_folder(path.parent)


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise StorageError(f"{path} is not readable JSON: {error}") from None


@contextlib.contextmanager
def locked(folder: Path) -> Iterator[None]:
    """Hold the folder's lock (an flock on folder/.lock) for a read-then-write: two refreshes
    at once take turns instead of choosing the same entry number."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
