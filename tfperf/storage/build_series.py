"""A case's series across TensorFlow builds: its runs on one kind of machine (the machine key
without its TensorFlow) and one configuration (the hard fingerprint without the build), under
every build it ran, ordered by the build and summarised per build.

Builds are ordered by their version as the package index orders them (PEP 440): 2.21.0, then
the nightlies towards the next release (2.22.0.dev20260105, ...; a nightly's TensorFlow says
2.22.0-dev20260105, the same version), then 2.22.0rc0, 2.22.0rc1, 2.22.0. Two builds of one
version (a source build at another commit) are ordered by when each first ran; a version the
index would not accept comes first, by the same rule. Runs of one TensorFlow under another Keras
(keras-nightly beside a release, say) are builds of their own, ordered by the Keras version
after TensorFlow's; a run kept before its Keras was recorded has none and comes first.
"""

from __future__ import annotations

import datetime
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from packaging.version import InvalidVersion, Version

# The gated figures a run's row holds as columns, and the numerics' figure (the training loss
# after the measured rounds) that its document holds: what the series shows of each build.
COLUMNS = ("examples_per_sec", "mfu", "compile_cpu_s", "peak_memory_bytes")
FIGURES = (*COLUMNS, "loss_last")
_NO_VERSION = Version("0")


def version_of(tensorflow: str) -> Version | None:
    try:
        return Version(tensorflow)
    except InvalidVersion:
        return None


@dataclass
class BuildPoint:
    """One build's runs of the series: its figures' values, run by run, oldest first."""

    tensorflow: str
    git_hash: str
    keras: str
    first: datetime.datetime
    sessions: list[str] = field(default_factory=list)
    values: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))

    @property
    def label(self) -> str:
        said = self.tensorflow or f"unknown ({self.git_hash[:10] or 'no commit'})"
        return f"{said} + keras {self.keras}" if self.keras else said

    def median(self, figure: str) -> float | None:
        found = self.values.get(figure) or []
        return statistics.median(found) if found else None

    def order(self) -> tuple[bool, Version, bool, Version, datetime.datetime]:
        version, keras = version_of(self.tensorflow), version_of(self.keras)
        return (version is not None, version or _NO_VERSION, keras is not None,
                keras or _NO_VERSION, self.first)


@dataclass(frozen=True)
class Series:
    case_id: str
    machine_kind: str
    series_key: str  # the configuration: a case whose configuration changed has a new series
    builds: tuple[BuildPoint, ...]

    @property
    def runs(self) -> int:
        return sum(len(b.sessions) for b in self.builds)


def of_rows(rows: Iterable[Mapping[str, Any]]) -> list[Series]:
    """The series in the store's rows of one case (ResultsStore.series), one per machine kind
    and configuration, each with its builds in build order; the series with the most runs
    first."""
    grouped: dict[tuple[str, str, str], dict[tuple[str, str, str], BuildPoint]] = \
        defaultdict(dict)
    for row in sorted(rows, key=lambda r: r["when"]):
        builds = grouped[(row["case_id"], row["machine_kind"], row["series_key"])]
        build = (row["tensorflow"], row["git_hash"], row.get("keras") or "")
        point = builds.setdefault(build, BuildPoint(*build, first=row["when"]))
        point.sessions.append(row["session_id"])
        for figure in FIGURES:
            if row.get(figure) is not None:
                point.values[figure].append(float(row[figure]))
    found = [Series(case, kind, key, tuple(sorted(builds.values(), key=BuildPoint.order)))
             for (case, kind, key), builds in grouped.items()]
    return sorted(found, key=lambda s: (-s.runs, s.machine_kind, s.series_key))
