"""Every gated run is kept: one session file per `pytest perf/` session, one run per case.

A case's baseline is its recent history of runs, not one file. A run holds what the gate needs
later without re-running anything: the per-run median, every round's rate (for the
Mann-Whitney test), the other gated figures, the fingerprint and the verdict it got.
"""

from __future__ import annotations

import datetime
import functools
import os
import re
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tfperf.ground.vocabulary import NOT_JUDGED, RUN_VERDICT, RunVerdict, current_status
from tfperf.storage import formats, schemas
from tfperf.storage.errors import known
from tfperf.storage.files import read_json, write_growing
from tfperf.storage.fingerprint import Fingerprint

SESSION_FORMAT = formats.SESSION_FORMAT
# The figures the gate judges (gate.statistics.METRICS'), each a Run attribute.
GATED = ("examples_per_sec", "scaling_efficiency", "peak_memory_bytes", "compile_cpu_s")


@dataclass(frozen=True)
class Run:
    case_id: str
    fingerprint: Fingerprint
    when: str  # ISO 8601, UTC: runs sort by it
    session: str
    examples_per_sec: float  # the median round's
    round_examples_per_sec: tuple[float, ...]
    scaling_efficiency: float | None = None
    peak_memory_bytes: float | None = None
    # CPU time (all threads) of the first round beyond a measured round's: tracing, compiling.
    compile_cpu_s: float | None = None
    commit: str = ""
    verdict: RunVerdict = NOT_JUDGED  # what the gate said (none for a refresh's sessions)
    reason: str = ""  # why, in one line (gate.case_verdict.reason); "" in files kept before it
    rerun_round_examples_per_sec: tuple[float, ...] = field(default=())
    wall_s: float | None = None  # the case, start to finish: what a plan's estimate reads
    # The re-run's gated figures (GATED), so that the kept run is judged again as it was.
    rerun: dict[str, float | None] = field(default_factory=dict)

    def value(self, metric: str) -> float | None:
        value = getattr(self, metric)
        return float(value) if value is not None else None

    def judged(self, verdict: RunVerdict, reason: str, again: Run | None) -> Run:
        """This run as kept after the gate: its verdict, why, and what its re-run measured."""
        return replace(self, verdict=verdict, reason=reason, rerun_round_examples_per_sec=(
            again.round_examples_per_sec if again else ()),
            rerun={name: again.value(name) for name in GATED} if again else {})

    def again(self) -> Run | None:
        """The re-run the gate confirmed with, rebuilt from what was kept; None if none ran
        (or the file was kept before re-runs' figures were)."""
        if not self.rerun or not self.rerun_round_examples_per_sec:
            return None
        kept = self.rerun
        return replace(self, round_examples_per_sec=self.rerun_round_examples_per_sec,
                       examples_per_sec=kept.get("examples_per_sec") or self.examples_per_sec,
                       scaling_efficiency=kept.get("scaling_efficiency"),
                       peak_memory_bytes=kept.get("peak_memory_bytes"),
                       compile_cpu_s=kept.get("compile_cpu_s"))

    def to_json(self) -> dict[str, Any]:
        return {
            "case_id": self.case_id, "fingerprint": self.fingerprint.to_json(),
            "when": self.when, "session": self.session, "commit": self.commit,
            "examples_per_sec": self.examples_per_sec,
            "round_examples_per_sec": list(self.round_examples_per_sec),
            "scaling_efficiency": self.scaling_efficiency,
            "peak_memory_bytes": self.peak_memory_bytes, "compile_cpu_s": self.compile_cpu_s,
            "verdict": self.verdict, "reason": self.reason,
            "rerun_round_examples_per_sec": list(self.rerun_round_examples_per_sec),
            "wall_s": self.wall_s, "rerun": dict(self.rerun),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str = "a kept run") -> Run:
        """A run from a stored file or the store (`where`), already validated against
        schemas.RUN by its reader; StorageError, naming it, if its verdict is none of a run's."""
        kept = str(data.get("verdict", ""))
        verdict = known(RUN_VERDICT, current_status(kept),
                        f"{where}: run of {data['case_id']} in session {data['session']}: its verdict")
        return cls(
            case_id=data["case_id"], fingerprint=Fingerprint.from_json(data["fingerprint"]),
            when=data["when"], session=data["session"], commit=str(data.get("commit", "")),
            examples_per_sec=float(data["examples_per_sec"]),
            round_examples_per_sec=tuple(float(r) for r in data["round_examples_per_sec"]),
            scaling_efficiency=number(data.get("scaling_efficiency")),
            peak_memory_bytes=number(data.get("peak_memory_bytes")),
            compile_cpu_s=number(data.get("compile_cpu_s")),
            verdict=verdict,
            reason=str(data.get("reason", "")),
            rerun_round_examples_per_sec=tuple(
                float(r) for r in data.get("rerun_round_examples_per_sec", [])),
            wall_s=number(data.get("wall_s")),
            rerun={name: number(data.get("rerun", {}).get(name)) for name in GATED
                   if name in data.get("rerun", {})},
        )


def number(value: Any) -> float | None:
    """A kept figure: a number, or None for anything else (a missing or null field)."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="microseconds")


@functools.cache
def _commit() -> str:
    return commit()


def commit() -> str:
    """The checked-out commit, with -dirty when the tree has changes; "" outside git."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""
    return head + ("-dirty" if dirty else "")


class History:
    """The session files under `folder/results/`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.results = folder / "results"

    def sessions(self) -> list[Path]:
        return sorted(self.results.glob("*.json")) if self.results.is_dir() else []

    def runs(self, exclude: Path | None = None) -> list[Run]:
        """Every stored run, oldest first. A file of another format (pytest-benchmark's JSON
        kept by older nightlies) is passed over; a broken session file stops with its name."""
        runs: list[Run] = []
        for path in self.sessions():
            if exclude is not None and path.resolve() == exclude.resolve():
                continue
            data = read_json(path)
            if isinstance(data, dict) and data.get("format") == SESSION_FORMAT:
                runs.extend(read_session(path, data))
        return sorted(runs, key=lambda r: r.when)

    def keep(self, session: str, tier: str, machine_key: str, runs: Iterable[Run],
             failures: Sequence[Mapping[str, Any]] = ()) -> Path:
        """Write this session's file with every run and every failure so far (each failure as
        stored_runs.failure_json gives it). Called as each case ends, so a session killed
        mid-way keeps every finished case, and a nightly that keeps only its files (and builds
        its dashboard by importing them) loses no failure."""
        return self.write(session, tier, machine_key, [r.to_json() for r in runs], failures)

    def write(self, session: str, tier: str, machine_key: str,
              runs: Sequence[Mapping[str, Any]], failures: Sequence[Mapping[str, Any]] = ()
              ) -> Path:
        """The session's file from its runs' documents (as the results store keeps them)."""
        path = self.results / f"{session}.json"
        write_growing(path, {"format": SESSION_FORMAT, "session": session, "tier": tier,
                             "machine_key": machine_key, "when": now(), "commit": _commit(),
                             "runs": list(runs),
                             **({"failures": list(failures)} if failures else {})})
        return path


def read_session(path: Path, data: Mapping[str, Any] | None = None) -> list[Run]:
    data = read_json(path) if data is None else data
    schemas.validate(data, schemas.SESSION, path, "tfperf session file")
    return [Run.from_json(run, str(path)) for run in data["runs"]]


# A session id its caller chose (tfperf-bisect names each step's session so that it finds the
# step's A/B file); letters, digits, '.', '_' and '-' only, since it names files.
SESSION_ID_ENV = "TFPERF_SESSION_ID"
_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def session_id() -> str:
    """A new session's id: $TFPERF_SESSION_ID if set, else the time and this process."""
    chosen = os.environ.get(SESSION_ID_ENV)
    if chosen is not None:
        if not _SAFE_ID.fullmatch(chosen):
            raise ValueError(f"${SESSION_ID_ENV}: {chosen!r} is not a session id (letters, "
                             "digits, '.', '_' and '-', at most 100)")
        return chosen
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%S%fZ")
    return f"{stamp}-{os.getpid()}"
