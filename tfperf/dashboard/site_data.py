"""What the dashboard shows, read from the store in four queries and its findings (columns only, never the
stored documents of runs: a year of a fleet's nights is a few hundred thousand runs; of an A/B
case's, only its where-report; a bisection's, which holds its steps, is read whole: there are a
handful a week). Each verdict and cause is checked against its vocabulary as it is read:
StorageError, one line naming the row, where one is none of it."""

from __future__ import annotations

import datetime
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import sqlalchemy as sa

from tfperf.ground.vocabulary import (
    AB_CASE_OUTCOME,
    CAUSE,
    RUN_VERDICT,
    ABCaseOutcome,
    Cause,
    RunVerdict,
)
from tfperf.storage import findings, tables
from tfperf.storage.errors import known
from tfperf.storage.findings import Finding
from tfperf.storage.results_store import BisectRow, ResultsStore


class Point(NamedTuple):
    """A run as its case's page plots it: a year of a fleet's nights is a few hundred thousand,
    and a named tuple is made in a third of a frozen dataclass's time."""

    when: datetime.datetime
    machine_key: str
    examples_per_sec: float
    tensorflow: str
    git_hash: str
    verdict: RunVerdict
    session: str
    reason: str = ""  # why the verdict (gate.case_verdict.reason); "" before store 0004
    flagged: str = ""  # what the run's sanity checks flagged (a disturbed yardstick...)
    scaling_efficiency: float | None = None
    peak_memory_bytes: float | None = None
    compile_cpu_s: float | None = None
    mfu: float | None = None
    machine_kind: str = ""  # its series across builds (storage.build_series); "" before 0009
    series_key: str = ""
    keras: str | None = None  # the Keras beside its TensorFlow; None in runs kept before it
    loss_last: float | None = None  # the training loss after its measured rounds

    def figure(self, name: str) -> float | None:
        value = getattr(self, name)
        return float(value) if value is not None else None


@dataclass(frozen=True)
class Failure:
    when: datetime.datetime
    machine_key: str
    cause: Cause
    phase: str
    message: str
    log_path: str
    log_tail: str = ""  # the last lines of the worker's log the store keeps (8,000 characters)


@dataclass(frozen=True)
class ABCase:
    session: str
    case_id: str
    when: datetime.datetime
    verdict: ABCaseOutcome  # its speed verdict, `no pairs` or `FAILED (cause)`
    ratio: float | None
    low: float | None
    high: float | None
    pairs: int
    machine_key: str
    # Where in the step (tfperf.ab.where), for a finding or a case profiled on request.
    where: dict[str, Any] | None = None


@dataclass
class SiteData:
    runs: dict[str, list[Point]] = field(default_factory=lambda: defaultdict(list))
    failures: dict[str, list[Failure]] = field(default_factory=lambda: defaultdict(list))
    ab: dict[str, list[ABCase]] = field(default_factory=lambda: defaultdict(list))
    bisects: list[BisectRow] = field(default_factory=list)  # oldest first, with their steps
    findings: list[Finding] = field(default_factory=list)  # oldest first
    # Each A/B session's differences between its sides (tfperf.ab.differences), if kept.
    differences: dict[str, list[dict[str, str]]] = field(default_factory=dict)

    @property
    def cases(self) -> list[str]:
        return sorted(set(self.runs) | set(self.failures))

    @property
    def newest(self) -> datetime.datetime | None:
        times = [p.when for points in self.runs.values() for p in points[-1:]] + [
            f.when for fails in self.failures.values() for f in fails[-1:]]
        return max(times, default=None)


def read(store: ResultsStore) -> SiteData:
    data = SiteData()
    runs, failures, ab, sessions = tables.runs, tables.failures, tables.ab_cases, tables.sessions
    where = f"the results store {store.where}"
    with store.engine.connect() as connection:
        for row in connection.execute(sa.select(  # after the case, a Point's fields in order
                runs.c.case_id, runs.c.when, runs.c.machine_key, runs.c.examples_per_sec,
                runs.c.tensorflow, runs.c.git_hash, runs.c.verdict, runs.c.session_id,
                runs.c.reason, runs.c.flagged, runs.c.scaling_efficiency,
                runs.c.peak_memory_bytes, runs.c.compile_cpu_s, runs.c.mfu,
                runs.c.machine_kind, runs.c.series_key,
                runs.c.document["fingerprint"]["soft"]["keras"].as_string(),
                runs.c.document["figures"]["loss_last"].as_float(),
        ).order_by(runs.c.when, runs.c.id)):
            point = Point._make(row[1:])
            known(RUN_VERDICT, point.verdict,
                  f"{where}, runs.verdict of session {point.session}, case {row[0]}")
            data.runs[row[0]].append(point)
        for failed in connection.execute(sa.select(
                failures.c.case_id, failures.c.when, failures.c.machine_key, failures.c.cause,
                failures.c.phase, failures.c.message, failures.c.log_path, failures.c.log_tail,
                failures.c.session_id,
        ).order_by(failures.c.when, failures.c.id)):
            data.failures[failed.case_id].append(Failure(
                failed.when, failed.machine_key, known(CAUSE, failed.cause, (
                    f"{where}, failures.cause of session {failed.session_id}, case "
                    f"{failed.case_id}")),
                failed.phase, failed.message, failed.log_path, failed.log_tail))
        for compared in connection.execute(sa.select(
                ab.c.session_id, ab.c.case_id, ab.c.when, ab.c.verdict, ab.c.ratio, ab.c.low,
                ab.c.high, ab.c.pairs, sessions.c.machine_key, ab.c.document["where"],
        ).join(sessions, sessions.c.id == ab.c.session_id).order_by(ab.c.when, ab.c.id)):
            session, case, when, verdict = compared[:4]
            data.ab[session].append(ABCase(
                session, case, when, known(AB_CASE_OUTCOME, verdict, (
                    f"{where}, ab_cases.verdict of session {session}, case {case}")),
                *compared[4:9], compared[9] or None))
        for id_, differences in connection.execute(sa.select(
                sessions.c.id, sessions.c.differences).where(sessions.c.kind == "ab",
                                                             sessions.c.differences.is_not(None))):
            data.differences[id_] = list(differences)
    data.bisects = store.bisects()  # a handful a week: their documents hold the steps
    data.findings = findings.read(store.engine)
    return data
