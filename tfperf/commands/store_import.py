"""Bring kept files into the results store, once: measured sessions' history files, A/B session
files, and a perf-history checkout (a folder of them). Every file is read and checked before
anything is written; a session already in the store keeps what it has and gains what it lacks,
so importing twice adds nothing."""

from __future__ import annotations

import datetime
import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tfperf.ab import session_file, session_report
from tfperf.ground.failures import CaseFailure
from tfperf.storage import formats, session_files, stored_runs, tables, timestamps
from tfperf.storage.errors import StorageError
from tfperf.storage.files import read_json
from tfperf.storage.results_store import ResultsStore, SessionKind, SessionRow


@dataclass(frozen=True)
class Kept:
    """One kept file, read and checked."""

    path: Path
    data: dict[str, Any]

    @functools.cached_property  # read when checked, written, and checked again: parsed once
    def session(self) -> SessionRow:
        kind: SessionKind = "ab" if self.data["format"] == formats.AB_FORMAT else "measured"
        # Its first run's time (compared as times, whatever their offsets), or the file's own;
        # a file that names none (a measured session with no run) is dated when it was written.
        times = [r["when"] for r in self.data.get("runs", [])] or [self.data.get("when")]
        started = min((timestamps.utc(t) for t in times if t), default=None) or \
            datetime.datetime.fromtimestamp(self.path.stat().st_mtime, datetime.UTC)
        return SessionRow(str(self.data["session"]), kind, str(self.data["tier"]),
                          str(self.data["machine_key"]), str(self.data.get("commit", "")),
                          started, str(self.path),
                          session_report.differences_of(self.data) if kind == "ab" else None)


@dataclass
class Found:
    kept: list[Kept] = field(default_factory=list)
    other: list[Path] = field(default_factory=list)  # JSON of another format: passed over


def _files(paths: Iterable[Path]) -> list[Path]:
    found = []
    for path in paths:
        if path.is_dir():
            found += sorted(p for p in path.rglob("*.json") if not p.name.startswith("."))
        elif path.is_file():
            found.append(path)
        else:
            raise StorageError(f"{path}: no such file or folder")
    return found


def read(paths: Iterable[Path]) -> Found:
    """Every kept file under `paths`, checked against its format's schema: StorageError, naming
    the file, at the first one that is broken."""
    found = Found()
    for path in _files(paths):
        data = read_json(path)
        kind = data.get("format") if isinstance(data, dict) else None
        if kind == formats.SESSION_FORMAT:
            session_files.read_session(path, data)
        elif kind == formats.AB_FORMAT:
            session_file.validate(data, path)
        else:
            found.other.append(path)
            continue
        kept = Kept(path, data)
        try:  # its times are read here, before anything is written
            kept.session  # noqa: B018
            for failure in data.get("failures", []) if kind == formats.SESSION_FORMAT else []:
                stored_runs.failure_of(failure, str(path))
        except ValueError as error:
            raise StorageError(f"{path}: a time in it is not an ISO 8601 time: {error}") from None
        found.kept.append(kept)
    return found


def _ab_failure(case: dict[str, Any]) -> CaseFailure | None:
    failure = case.get("failure")
    if not failure:
        return None
    # Its cause was checked as the file was read (session_file.validate).
    return CaseFailure(failure["cause"], str(failure["message"]))


def write(store: ResultsStore, kept: Kept) -> int:
    """Add what the store lacks of one file; how many rows were added."""
    row, data = kept.session, kept.data
    if row.kind == "measured":
        return store.add_runs(row, data["runs"]) + store.add_failures(
            row, [stored_runs.failure_of(f, str(kept.path)) for f in data.get("failures", [])])
    settings = session_report.settings_of(data)
    added = store.add_ab_cases(row, [session_report.stored_row(case, settings, row.started)
                                     for case in data["cases"]])
    failures = [(case["case_id"], _ab_failure(case)) for case in data["cases"]]
    return added + store.add_failures(row, [stored_runs.failure_row(case_id, failure)
                                            for case_id, failure in failures if failure])


def missing(store: ResultsStore, kept: Kept) -> list[str]:
    """The file's cases the store does not hold (empty once the import is done), its failures
    too: one query a table of the session's case ids, not of every stored run of its cases (a
    year's history is imported a file at a time)."""
    measured = kept.session.kind == "measured"
    stored = store.case_ids(tables.runs if measured else tables.ab_cases, kept.session.id)
    failed = store.case_ids(tables.failures, kept.session.id)
    return [item["case_id"] for item in kept.data["runs" if measured else "cases"]
            if item["case_id"] not in stored] + [
        f"{item['case_id']} (failure)" for item in kept.data.get("failures", [])
        if measured and item["case_id"] not in failed]
