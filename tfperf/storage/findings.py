"""What is worth telling people, read from the results store, each under a key that stays the
same however often it is read: the notifier sends a key once.

- A regression or a failure is a streak: the sessions in a row in which a case, on one machine,
  regressed (the gate confirmed it) or failed the same way. It is one finding from the session
  that began it until a session in which the case ran clean, however many nights it lasts; a
  streak that begins again later is a new finding.
- A slower A/B case is one finding an A/B session (each compares its own two sides). The A/B
  steps of a bisection are not findings: their bisection's culprit is.
- A culprit is one finding a bisection that named one.
"""

from __future__ import annotations

import datetime
import itertools
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, NamedTuple

import sqlalchemy as sa

from tfperf.ground.vocabulary import (
    AB_SLOWER,
    CAUSE,
    CULPRIT,
    FAILURE,
    FINDING_KINDS,
    FOLLOWED_WORDS,
    OK,
    REGRESSION,
    RUN_VERDICT,
    SLOWER,
    FindingKind,
    State,
)
from tfperf.storage import database, tables
from tfperf.storage.errors import known

Kind = FindingKind
KINDS = FINDING_KINDS


@dataclass(frozen=True)
class Finding:
    key: str  # kind, machine, case and the session (or bisection) it began with
    kind: Kind
    case_id: str
    machine_key: str
    when: datetime.datetime  # when it began
    summary: str  # one line
    detail: str  # a few lines: the figures, the reason, the message
    sessions: int = 1  # how many sessions in a row it has lasted
    origin: str = ""  # the session (or bisection) it began with
    last: datetime.datetime | None = None  # a streak's newest session
    ended: datetime.datetime | None = None  # the session that ended a streak; None: still open
    before: float | None = None  # a regression's examples/s in the clean session before it
    rate: float | None = None  # a regression's examples/s in its newest session

    @property
    def factor(self) -> float | None:
        """A regression's newest examples/s over the clean run's before it."""
        return self.rate / self.before if self.rate and self.before else None


class _Event(NamedTuple):  # one a run: a named tuple is made in a third of a dataclass's time
    when: datetime.datetime
    session_id: str
    state: State  # ok, or a failure's cause (a confirmed regression's: regression)
    detail: str
    rate: float | None = None  # examples/s, where the case ran


def _events(connection: sa.Connection, where: str) -> dict[tuple[str, str], list[_Event]]:
    """Each (case, machine)'s sessions, oldest first, with what happened to the case in each: a
    failure row says more than its session's run row (a regression keeps both). A verdict or
    cause none of its vocabulary's is StorageError, naming the row."""
    found: dict[tuple[str, str, str], _Event] = {}
    r = tables.runs.c
    for session, case, key, when, verdict, eps, reason in connection.execute(sa.select(
            r.session_id, r.case_id, r.machine_key, r.when, r.verdict, r.examples_per_sec,
            r.reason)):
        # A year of a fleet is a few hundred thousand runs: only a regression's is spelled out.
        verdict = known(RUN_VERDICT, verdict, f"{where}, runs.verdict of session {session}, case {case}")
        state: State = REGRESSION if verdict == REGRESSION else OK
        detail = f"{eps:.1f} examples/s" + (f": {reason}" if reason else "") \
            if state == REGRESSION else ""
        found[session, case, key] = _Event(when, session, state, detail, eps)
    f = tables.failures.c
    for session, case, key, when, cause, phase, message in connection.execute(sa.select(
            f.session_id, f.case_id, f.machine_key, f.when, f.cause, f.phase, f.message)):
        ran = found.get((session, case, key))
        cause = known(CAUSE, cause, f"{where}, failures.cause of session {session}, case {case}")
        if cause == REGRESSION and ran is not None:
            continue  # the run row holds its figures and the gate's reason
        found[session, case, key] = _Event(when, session, cause,
                                           f"{cause} in {phase}: {message}")
    by_case: dict[tuple[str, str], list[_Event]] = defaultdict(list)
    for (_, case, key), event in found.items():
        by_case[case, key].append(event)
    for events in by_case.values():
        events.sort(key=lambda e: (e.when, e.session_id))
    return by_case


def _streaks(case: str, machine: str, events: list[_Event]) -> list[Finding]:
    """A finding for each run of sessions in a row that regressed or failed the same way."""
    groups = [(state, list(group)) for state, group in itertools.groupby(
        events, key=lambda e: e.state)]
    found: list[Finding] = []
    for i, (state, streak) in enumerate(groups):
        if state == OK:
            continue
        first, newest, lasted = streak[0], streak[-1], len(streak)
        kind: Kind = REGRESSION if state == REGRESSION else FAILURE
        what = "regressed" if kind == REGRESSION else f"failed ({state})"
        before = groups[i - 1][1][-1].rate if i and groups[i - 1][0] == OK else None
        found.append(Finding(
            f"{kind}:{machine}:{case}:{first.session_id}", kind, case, machine, first.when,
            f"{case} {what} on {machine}",
            newest.detail + (f" ({lasted} sessions in a row)" if lasted > 1 else ""), lasted,
            first.session_id, newest.when, groups[i + 1][1][0].when if i + 1 < len(groups)
            else None, before, newest.rate))
    return found


def _ab_slower(connection: sa.Connection, bisect_ids: set[str]) -> list[Finding]:
    a, s = tables.ab_cases.c, tables.sessions.c
    found = []
    for session, case, when, ratio, low, high, pairs, machine in connection.execute(
            sa.select(a.session_id, a.case_id, a.when, a.ratio, a.low, a.high, a.pairs,
                      s.machine_key).join_from(tables.ab_cases, tables.sessions,
                                               a.session_id == s.id).where(a.verdict == SLOWER)):
        if any(session.startswith(f"{b}-") for b in bisect_ids):
            continue  # a bisection's step
        interval = f" [{low:.3f}, {high:.3f}]" if low is not None and high is not None else ""
        figure = f"B/A {ratio:.3f}{interval}" if ratio is not None else "B slower"
        found.append(Finding(f"{AB_SLOWER}:{machine}:{case}:{session}", AB_SLOWER, case,
                             machine, when, f"{case}: B slower than A on {machine}",
                             f"{figure} over {pairs} pairs (A/B session {session})",
                             origin=session, last=when))
    return found


def _culprits(connection: sa.Connection) -> list[Finding]:
    b = tables.bisects.c
    return [_culprit(*row) for row in connection.execute(
        sa.select(b.id, b.when, b.machine_key, b.case_id, b.kind, b.outcome, b.culprit,
                  b.last_good, b.document).where(b.culprit.is_not(None)))]


def _culprit(id_: str, when: datetime.datetime, machine: str, case: str, kind: str,
             outcome: str, culprit: str, last_good: str | None, document: dict[str, Any]
             ) -> Finding:
    """A bisection's culprit, in the words of the finding it followed; one that answered a
    change point of the case's series says which, and what its confirmation measured."""
    worse = FOLLOWED_WORDS.get(document.get("followed", "slower"), FOLLOWED_WORDS["slower"])
    detail = f"last good: {last_good or 'unknown'}; bisection {id_} ({kind}, {outcome})"
    point, steps = document.get("change_point"), document.get("steps") or [{}]
    if point:
        detail += f"; change point: {point.get('described', '')}"
    if steps[0].get("ratio") is not None:
        confirm = steps[0]
        detail += (f"; confirmed by A/B: B/A {confirm['ratio']:.3f} [{confirm['low']:.3f}, "
                   f"{confirm['high']:.3f}]")
    return Finding(f"{CULPRIT}:{machine}:{case}:{id_}", CULPRIT, case, machine, when,
                   f"{case} {worse} since {culprit} on {machine}", detail, origin=id_,
                   last=when)


def read(engine: sa.Engine, since: datetime.datetime | None = None,
         kinds: tuple[Kind, ...] = KINDS) -> list[Finding]:
    """The store's findings of these kinds that began at `since` or later, oldest first;
    StorageError, one line, where a row's verdict or cause is none of its vocabulary's."""
    where = f"the results store {database.shown(engine.url)}"
    with engine.connect() as connection:
        bisect_ids = set(connection.execute(sa.select(tables.bisects.c.id)).scalars())
        found = [finding for (case, machine), events in _events(connection, where).items()
                 for finding in _streaks(case, machine, events)]
        found += _ab_slower(connection, bisect_ids) + _culprits(connection)
    return sorted((f for f in found if f.kind in kinds and (since is None or f.when >= since)),
                  key=lambda f: (f.when, f.key))
