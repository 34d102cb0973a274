"""What a store can let go of: rows older than a date that nothing still reads.

Kept whatever their age:
- each case's newest runs on each machine and TensorFlow build (`keep_runs`, the gate's history
  limit by default): what the gate judges a new run against;
- open findings: a case whose newest runs on a machine are regressions keeps that streak, and
  a failure newer than its case's newest run on that machine (nothing has run since) stays;
- every bisection, and the A/B cases of its steps (their sessions are named after it);
- every session that still has a row.
Everything else from before the date goes: runs, failures, A/B cases, then the sessions left
empty. The baselines are files of their own (baselines/), which pruning never touches.
"""

from __future__ import annotations

import datetime
from collections import defaultdict
from dataclasses import dataclass, field

import sqlalchemy as sa

from tfperf.ground.vocabulary import REGRESSION
from tfperf.storage import tables, timestamps


@dataclass(frozen=True)
class Plan:
    before: str  # ISO date or time: rows before it may go
    runs: list[int] = field(default_factory=list)
    failures: list[int] = field(default_factory=list)
    ab_cases: list[int] = field(default_factory=list)
    sessions: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {"runs": len(self.runs), "failures": len(self.failures),
                "ab_cases": len(self.ab_cases), "sessions": len(self.sessions)}


Newest = dict[tuple[str, str], datetime.datetime]  # (case, machine key) -> its newest run's time
Run = tuple[datetime.datetime, int, str, str, bool]  # when, id, verdict, session, before the date


def _old_runs(connection: sa.Connection, before: datetime.datetime, keep_runs: int
              ) -> tuple[list[int], Newest, set[str]]:
    """The runs that may go, each (case, machine)'s newest run's time, and the sessions of the
    runs that stay. Whether a row is before the date, the database says (times since 0005)."""
    r = tables.runs.c
    groups: dict[tuple[str, ...], list[Run]] = defaultdict(list)
    newest: Newest = {}
    for id_, session, case, key, tf, git, when, verdict, old in connection.execute(sa.select(
            r.id, r.session_id, r.case_id, r.machine_key, r.tensorflow, r.git_hash, r.when,
            r.verdict, (r.when < before).label("old"))):
        groups[case, key, tf, git].append((when, id_, verdict, session, bool(old)))
        newest[case, key] = max(newest.get((case, key), when), when)
    kept: set[int] = set()
    for runs in groups.values():
        runs.sort()
        kept.update(run[1] for run in runs[-keep_runs:])
    by_case: dict[tuple[str, str], list[Run]] = defaultdict(list)
    for (case, key, _, _), runs in groups.items():
        by_case[case, key].extend(runs)
    for runs in by_case.values():
        runs.sort()
        while runs and runs[-1][2] == REGRESSION:  # an open finding: the streak stays
            kept.add(runs.pop()[1])
    gone: list[int] = []
    left: set[str] = set()
    for runs in groups.values():
        for _, id_, _, session, old in runs:
            if old and id_ not in kept:
                gone.append(id_)
            else:
                left.add(session)
    return sorted(gone), newest, left


def plan(engine: sa.Engine, before: str, keep_runs: int) -> Plan:
    """What pruning everything before `before` (an ISO date or time; without a zone, UTC) would
    delete; nothing is deleted."""
    moment = timestamps.utc(before)
    with engine.connect() as connection:
        runs, newest, left = _old_runs(connection, moment, keep_runs)
        f = tables.failures.c
        failures = []
        for id_, session, case, key, when, old in connection.execute(sa.select(
                f.id, f.session_id, f.case_id, f.machine_key, f.when, (f.when < moment))):
            # Resolved (its case ran since) and old: it goes; else an open finding stays.
            ran_since = (case, key) in newest and when <= newest[case, key]
            if old and ran_since:
                failures.append(id_)
            else:
                left.add(session)
        bisects = list(connection.execute(sa.select(tables.bisects.c.id)).scalars())
        a = tables.ab_cases.c
        ab_cases = []
        for id_, session, old in connection.execute(sa.select(a.id, a.session_id,
                                                              a.when < moment)):
            if old and not any(session.startswith(f"{b}-") for b in bisects):
                ab_cases.append(id_)
            else:
                left.add(session)
        s = tables.sessions.c
        sessions = [id_ for id_ in connection.execute(sa.select(s.id).where(
            s.started < moment)).scalars() if id_ not in left]
    return Plan(before, runs, failures, ab_cases, sorted(sessions))


def apply(engine: sa.Engine, chosen: Plan) -> None:
    """Delete what the plan holds, in one transaction: all of it or nothing."""
    with engine.begin() as connection:
        for table, ids in ((tables.runs, chosen.runs), (tables.failures, chosen.failures),
                           (tables.ab_cases, chosen.ab_cases)):
            for start in range(0, len(ids), 500):  # SQLite's bound on a statement's values
                connection.execute(table.delete().where(table.c.id.in_(ids[start:start + 500])))
        for start in range(0, len(chosen.sessions), 500):
            connection.execute(tables.sessions.delete().where(
                tables.sessions.c.id.in_(chosen.sessions[start:start + 500])))
