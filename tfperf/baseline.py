"""Stored baselines: pytest-benchmark JSON files under baselines/<machine key>/.

The newest file that holds a case is that case's baseline. A file that cannot be read or does
not have the expected shape stops the run with its name and the problem: it is never taken as
"no baseline", which would turn a broken store into a green run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class BaselineError(Exception):
    pass


@dataclass(frozen=True)
class Comparison:
    status: str  # "no baseline", "ok", "regression", "faster"
    baseline_examples_per_sec: float | None = None
    change: float | None = None  # throughput now over baseline, minus one
    source: str = ""
    note: str = ""


def _entries(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BaselineError(f"baseline file {path} is not readable JSON: {error}") from None
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
        raise BaselineError(f"baseline file {path} has no 'benchmarks' list")
    entries = []
    for i, bench in enumerate(data["benchmarks"]):
        info = bench.get("extra_info") if isinstance(bench, dict) else None
        if not isinstance(info, dict):
            raise BaselineError(f"baseline file {path}: benchmark {i} has no 'extra_info' object")
        if "case_id" not in info:
            continue  # not one of ours (a plain pytest-benchmark test stored alongside)
        eps = info.get("examples_per_sec")
        if not isinstance(eps, int | float) or isinstance(eps, bool) or eps <= 0:
            raise BaselineError(
                f"baseline file {path}: case {info['case_id']!r} has no positive examples_per_sec"
            )
        entries.append(info)
    return entries


class BaselineStore:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.latest: dict[str, tuple[Path, dict[str, Any]]] = {}
        files = sorted(folder.glob("[0-9][0-9][0-9][0-9]_*.json")) if folder.is_dir() else []
        for path in files:  # oldest first: later files replace earlier entries
            for info in _entries(path):
                self.latest[str(info["case_id"])] = (path, info)

    def compare(self, case_id: str, examples_per_sec: float, batch_size: int,
                threshold: float) -> Comparison:
        if case_id not in self.latest:
            return Comparison("no baseline", note=f"none in {self.folder}")
        path, info = self.latest[case_id]
        if info.get("batch_size") != batch_size:
            return Comparison(
                "no baseline", source=path.name,
                note=f"baseline batch {info.get('batch_size')}, this run {batch_size}")
        baseline = float(info["examples_per_sec"])
        change = examples_per_sec / baseline - 1
        status = "regression" if change < -threshold else "faster" if change > threshold else "ok"
        return Comparison(status, baseline, change, path.name)

    def field(self, case_id: str, name: str, batch_size: int) -> float | None:
        """A numeric figure of the case's baseline (None: no baseline, another batch size, or
        the baseline does not have it)."""
        found = self.latest.get(case_id)
        if found is None or found[1].get("batch_size") != batch_size:
            return None
        value = found[1].get(name)
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
