"""The gate's history, read from the results store, and a session's runs and failures written to
it. The store keeps documents; this module turns them into the gate's runs and back."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from tfperf.ground.failures import CaseFailure
from tfperf.ground.vocabulary import CAUSE, ERROR, REGRESSION
from tfperf.storage import machine_keys, session_files, timestamps
from tfperf.storage.errors import known
from tfperf.storage.results_store import (
    ABCaseRow,
    FailureRow,
    ResultsStore,
    SessionKind,
    SessionRow,
)
from tfperf.storage.session_files import Run

# How much of a failed case's log the store keeps: enough to read the error without the file.
LOG_TAIL_CHARS = 8000


@dataclass(frozen=True)
class StoredRuns:
    """One machine key's runs in the store, excluding one session (the one being judged), and
    those of the old keys it reads as its own (`legacy`: machine_keys.py), each CPU run given
    the key's instruction-set level."""

    store: ResultsStore
    machine_key: str
    exclude_session: str | None = None
    legacy: tuple[str, ...] = ()

    def of(self, case_id: str) -> list[Run]:
        """The case's runs, oldest first: one indexed query per case and key."""
        return self._read([case_id])

    def all(self) -> list[Run]:
        return self._read(None)

    def _read(self, case_ids: list[str] | None) -> list[Run]:
        level = machine_keys.level_of(self.machine_key)
        runs, where = [], f"the results store {self.store.where}"
        for key in (self.machine_key, *self.legacy):
            found = [Run.from_json(d, where) for d in self.store.runs(
                case_ids=case_ids, machine_key=key, exclude_session=self.exclude_session)]
            runs += [machine_keys.with_isa(r, level) for r in found] if key in self.legacy \
                and level else found
        return sorted(runs, key=lambda r: r.when) if self.legacy else runs


def session_row(session: str, kind: SessionKind, tier: str, machine_key: str) -> SessionRow:
    return SessionRow(session, kind, tier, machine_key, session_files.commit(), timestamps.now())


def documents(runs: Iterable[Run], figures: Mapping[str, Mapping[str, Any]] | None = None
              ) -> list[dict[str, Any]]:
    """Each run's document as the store keeps it: the run with the case's reported figures
    (`figures`: case id -> pytest-benchmark's extra_info) that are single values: MFU, compile
    time, step times, time to the first step..."""
    figures = figures or {}

    def kept(case_id: str) -> dict[str, Any]:
        reported = figures.get(case_id, {})
        singles = {key: value for key, value in reported.items()
                   if isinstance(value, str | int | float | bool | None)}
        # What the sanity checks flagged (a list), in one line.
        return {**singles, "figures_flagged": "; ".join(reported.get("figures_flagged") or [])}

    return [{**r.to_json(), "figures": kept(r.case_id)} for r in runs]


def keep_runs(store: ResultsStore, row: SessionRow, runs: Iterable[Run],
              figures: Mapping[str, Mapping[str, Any]] | None = None, refresh: bool = False
              ) -> int:
    """Add the session's runs the store does not have yet (with `refresh`, update those it
    has), each as `documents` makes it."""
    return store.add_runs(row, documents(runs, figures), refresh)


def failure_json(row: FailureRow) -> dict[str, Any]:
    """A failure as a session file keeps it (schemas.FAILURE): its time as ISO 8601 text."""
    return {**vars(row), "when": row.when.isoformat()}


def failure_of(data: Mapping[str, Any], where: str) -> FailureRow:
    """A kept failure (failure_json's), as the store takes it; StorageError, naming `where` it
    was read, if its cause is none of the causes."""
    cause = known(CAUSE, data["cause"], f"{where}: failure of {data['case_id']}: its cause")
    return FailureRow(str(data["case_id"]), timestamps.utc(str(data["when"])), cause,
                      str(data.get("phase", "")), str(data["message"]),
                      str(data.get("log_path", "")), str(data.get("log_tail", "")))


def failure_row(case_id: str, failure: CaseFailure) -> FailureRow:
    return FailureRow(case_id, timestamps.now(), failure.cause, failure.phase, failure.message,
                      failure.log_path, failure.log_tail[-LOG_TAIL_CHARS:])


def reported_failure(case_id: str, failure: CaseFailure | None, report_text: str) -> FailureRow:
    """The row of a failed test: its CaseFailure's, else (an error of the harness, a failed
    fixture, the XLA equivalence check) the report's error: its first `E` line, as pytest
    marks the exception (else its last line), and the report's end as the log's tail."""
    if failure is not None:
        return failure_row(case_id, failure)
    lines = [line for line in report_text.splitlines() if line.strip()]
    errors = [line[1:].strip() for line in lines if line.startswith("E ")]
    message = errors[0] if errors else lines[-1] if lines else "failed"
    return FailureRow(case_id, timestamps.now(), ERROR, "", message, "",
                      "\n".join(lines)[-LOG_TAIL_CHARS:])


def failed_case(keeper: Keeper | None, case_id: str, failure: CaseFailure | None, gated: bool,
                report_text: str) -> list[FailureRow]:
    """The row of a case that failed before the gate judged it, kept in the store; none for a
    confirmed regression, which the gate's own row reports."""
    if gated and failure is not None and failure.cause == REGRESSION:
        return []
    row = reported_failure(case_id, failure, report_text)
    if keeper is not None:
        keeper.failures([row])
    return [row]


class Keeper:
    """A session's writes to the store, as each case ends: each case once, whatever the number
    of calls."""

    def __init__(self, store: ResultsStore, row: SessionRow) -> None:
        self.store = store
        self.row = row

    @classmethod
    def of(cls, store: ResultsStore, session: str, kind: SessionKind, tier: str, key: str,
           differences: list[dict[str, str]] | None = None) -> Keeper:
        return cls(store, replace(session_row(session, kind, tier, key), differences=differences))

    def runs(self, runs: Iterable[Run],
             figures: Mapping[str, Mapping[str, Any]] | None = None, refresh: bool = False
             ) -> int:
        return keep_runs(self.store, self.row, runs, figures, refresh)

    def failures(self, failures: Sequence[FailureRow]) -> int:
        return self.store.add_failures(self.row, failures)

    def ab_cases(self, cases: Sequence[ABCaseRow]) -> int:
        return self.store.add_ab_cases(self.row, cases)
