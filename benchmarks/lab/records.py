"""The files the studies keep: JSON lines under benchmarks/data/<study>/, one file per machine
key, gzip-compressed and appended one gzip member at a time (so that a run stopped mid-way
loses nothing of what it appended), and session files (as pytest perf/ wrote them, or
compressed)."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Literal

from lab import ROOT

DATA = ROOT / "benchmarks" / "data"


def _open(path: Path, mode: Literal["rt", "at"]) -> IO[str]:
    if path.suffix == ".gz":
        return gzip.open(path, mode, encoding="utf-8")
    return open(path, mode, encoding="utf-8")


def rows(paths: Iterable[Path]) -> Iterator[dict[str, Any]]:
    """Every line of the files, in order (gzip or plain; blank lines passed over)."""
    for path in paths:
        with _open(path, "rt") as lines:
            yield from (json.loads(line) for line in lines if line.strip())


def append(path: Path, *lines: dict[str, Any]) -> None:
    """Append the lines to the file (gzip where its name ends .gz), its folder made if need be."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with _open(path, "at") as sink:
        for line in lines:
            sink.write(json.dumps(line) + "\n")


def session(path: Path) -> dict[str, Any]:
    """A kept A/B or history session file, read (gzip where its name ends .gz)."""
    with _open(path, "rt") as source:
        found: dict[str, Any] = json.load(source)
    return found
