"""What sessions write to the store and the gate reads from it.

Every write is one transaction that adds rows and never changes one: a session killed mid-write
leaves the store as it was before that write, and a case written twice (a session's live write,
then the import of its file) is kept once. A verdict, cause or outcome read back is checked
against its vocabulary (tfperf.ground.vocabulary): StorageError, one line, if it is none of it.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import sqlalchemy as sa

from tfperf.ground.machine import kind_of_key
from tfperf.ground.vocabulary import (
    AB_CASE_OUTCOME,
    CAUSE,
    OUTCOME,
    ROLE,
    STEP_VERDICT,
    ABCaseOutcome,
    Cause,
    Outcome,
    Vocabulary,
    current_status,
)
from tfperf.storage import build_series, database, tables, timestamps
from tfperf.storage.errors import StoreUnavailable, known
from tfperf.storage.fingerprint import series_key
from tfperf.storage.session_files import number

SessionKind = Literal["measured", "ab"]


@dataclass(frozen=True)
class SessionRow:
    id: str
    kind: SessionKind
    tier: str
    machine_key: str
    commit: str
    started: datetime.datetime  # timestamps.utc(an ISO time)
    source: str = "session"  # or the path of the file it was imported from
    # An A/B session's differences between its sides (tfperf.ab.differences); None: not kept.
    differences: list[dict[str, str]] | None = None


@dataclass(frozen=True)
class FailureRow:
    case_id: str
    when: datetime.datetime
    cause: Cause
    phase: str
    message: str
    log_path: str
    log_tail: str


@dataclass(frozen=True)
class ABCaseRow:
    case_id: str
    when: datetime.datetime
    verdict: ABCaseOutcome  # its speed verdict, `no pairs` or `FAILED (cause)`
    ratio: float | None
    low: float | None
    high: float | None
    pairs: int
    document: Mapping[str, Any]


@dataclass(frozen=True)
class BisectRow:
    id: str
    when: datetime.datetime
    machine_key: str
    case_id: str
    kind: Literal["tensorflow", "commits"]
    outcome: Outcome
    culprit: str | None
    last_good: str | None
    document: Mapping[str, Any]


class ResultsStore:
    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine

    @classmethod
    def open(cls, url: str, create: bool = True) -> ResultsStore:
        """Reach the store and bring its schema forward: StoreUnavailable, one line, if not.
        A reader (create=False) neither makes one (a mistyped URL must not read as a store
        that lost its data: it says there is none there) nor moves its schema."""
        engine = database.connect(url, create)
        try:
            if create:
                database.migrate(engine)
            else:
                database.readable(engine)
        except StoreUnavailable:
            engine.dispose()
            raise
        return cls(engine)

    @property
    def where(self) -> str:
        return database.shown(self.engine.url)

    def close(self) -> None:
        self.engine.dispose()

    def _session(self, connection: sa.Connection, session: SessionRow) -> None:
        found = connection.execute(sa.select(tables.sessions.c.id).where(
            tables.sessions.c.id == session.id)).first()
        if found is None:
            connection.execute(tables.sessions.insert().values(
                id=session.id, kind=session.kind, tier=session.tier,
                machine_key=session.machine_key, commit=session.commit,
                started=session.started, source=session.source,
                differences=session.differences))

    def _add(self, table: sa.Table, session: SessionRow, rows: list[dict[str, Any]]) -> int:
        """Insert the rows whose case the session has none of in `table` yet, in one
        transaction with the session's own row; how many."""
        with self.engine.begin() as connection:
            self._session(connection, session)
            have = _case_ids(connection, table, session.id)
            new = []
            for row in rows:
                # A case's first row only: a case that failed in its call and then in its
                # teardown is one failure (the table keeps one a case and session).
                if row["case_id"] not in have:
                    have.add(row["case_id"])
                    new.append(row)
            if new:
                connection.execute(table.insert(), new)
        return len(new)

    def case_ids(self, table: sa.Table, session_id: str) -> set[str]:
        """The cases one session has rows of in `table` (tables.runs, .failures, .ab_cases)."""
        with self.engine.connect() as connection:
            return _case_ids(connection, table, session_id)

    def add_runs(self, session: SessionRow, documents: Iterable[Mapping[str, Any]],
                 refresh: bool = False) -> int:
        """Add the session's runs (tfperf.storage.session_files.Run's JSON) it does not have yet; how
        many were added. With `refresh`, a run it has takes the new document: a live session's
        last word on its cases (the flags only the whole session can give), never an import's."""
        rows = [_run_row(session, d) for d in documents]
        added = self._add(tables.runs, session, rows)
        if refresh and rows:
            runs = tables.runs.c
            with self.engine.begin() as connection:
                for row in rows:
                    connection.execute(sa.update(tables.runs).where(
                        runs.session_id == session.id, runs.case_id == row["case_id"]).values(
                        document=row["document"], flagged=row["flagged"], mfu=row["mfu"]))
        return added

    def add_failures(self, session: SessionRow, failures: Iterable[FailureRow]) -> int:
        return self._add(tables.failures, session, [
            {"session_id": session.id, "machine_key": session.machine_key, **vars(f)}
            for f in failures])

    def add_ab_cases(self, session: SessionRow, cases: Iterable[ABCaseRow]) -> int:
        return self._add(tables.ab_cases, session, [
            {"session_id": session.id, **vars(c), "document": dict(c.document)} for c in cases])

    def add_bisect(self, bisect: BisectRow) -> bool:
        """Keep a bisection; False if one of its id is kept already (it is left as it was)."""
        with self.engine.begin() as connection:
            if connection.execute(sa.select(tables.bisects.c.id).where(
                    tables.bisects.c.id == bisect.id)).first() is not None:
                return False
            connection.execute(tables.bisects.insert().values(
                **{**vars(bisect), "document": dict(bisect.document)}))
        return True

    def bisects(self, case_id: str | None = None) -> list[BisectRow]:
        """Every bisection (of one case), oldest first."""
        query = sa.select(*(tables.bisects.c[name] for name in BisectRow.__dataclass_fields__)
                          ).order_by(tables.bisects.c.when, tables.bisects.c.id)
        if case_id is not None:
            query = query.where(tables.bisects.c.case_id == case_id)
        with self.engine.connect() as connection:
            return [self._bisect(row) for row in connection.execute(query)]

    def _bisect(self, row: sa.Row[Any]) -> BisectRow:
        """A kept bisection, its outcome and its steps' roles and verdicts checked."""
        where = f"the results store {self.where}, bisection {row.id}"
        for n, step in enumerate(row.document.get("steps") or [], 1):
            known(ROLE, step.get("role"), f"{where}, step {n}'s role")
            known(STEP_VERDICT, step.get("verdict"), f"{where}, step {n}'s verdict")
        return BisectRow(**{**row._mapping, "outcome": known(
            OUTCOME, row.outcome, f"{where}, bisects.outcome")})

    def runs(self, *, case_ids: Sequence[str] | None = None, machine_key: str | None = None,
             exclude_session: str | None = None, session_id: str | None = None
             ) -> list[dict[str, Any]]:
        """Stored runs (their documents) of measured sessions (of one), oldest first."""
        query = sa.select(tables.runs.c.document).order_by(tables.runs.c.when, tables.runs.c.id)
        if session_id is not None:
            query = query.where(tables.runs.c.session_id == session_id)
        if case_ids is not None:
            query = query.where(tables.runs.c.case_id.in_(case_ids))
        if machine_key is not None:
            query = query.where(tables.runs.c.machine_key == machine_key)
        if exclude_session is not None:
            query = query.where(tables.runs.c.session_id != exclude_session)
        with self.engine.connect() as connection:
            return [dict(d) for d in connection.execute(query).scalars()]

    def series(self, case_id: str, machine_kind: str | None = None) -> list[dict[str, Any]]:
        """The rows of one case's runs (on one kind of machine), under every build, oldest
        first: what build_series.of_rows makes its series of. One query, by the index on
        (case, kind, time)."""
        c = tables.runs.c
        # Keras and the loss live in the run's document only: read out by the query itself.
        query = sa.select(c.case_id, c.machine_kind, c.series_key, c.session_id, c.when,
                          c.tensorflow, c.git_hash, c.verdict,
                          *(c[name] for name in build_series.COLUMNS),
                          c.document["fingerprint"]["soft"]["keras"].as_string().label("keras"),
                          c.document["figures"]["loss_last"].as_float().label("loss_last")
                          ).where(c.case_id == case_id).order_by(c.when, c.id)
        if machine_kind is not None:
            query = query.where(c.machine_kind == machine_kind)
        with self.engine.connect() as connection:
            return [dict(row._mapping) for row in connection.execute(query)]

    def _rows(self, table: sa.Table, fields: Iterable[str], session_id: str | None,
              column: str, kind: Vocabulary[Any]) -> list[dict[str, Any]]:
        """The rows' fields, oldest first, `column` read as a value of `kind`: StorageError,
        naming the row's session and case, where it is none."""
        query = sa.select(table.c.session_id, *(table.c[name] for name in fields)).order_by(
            table.c.when, table.c.id)
        if session_id is not None:
            query = query.where(table.c.session_id == session_id)
        rows = []
        with self.engine.connect() as connection:
            for row in connection.execute(query):
                found = dict(row._mapping)
                session = found.pop("session_id")
                found[column] = known(kind, found[column], (
                    f"the results store {self.where}, {table.name}.{column} of session "
                    f"{session}, case {found['case_id']}"))
                rows.append(found)
        return rows

    def failures(self, session_id: str | None = None) -> list[FailureRow]:
        """Every failure (of one session), oldest first."""
        return [FailureRow(**row) for row in self._rows(
            tables.failures, FailureRow.__dataclass_fields__, session_id, "cause", CAUSE)]

    def ab_cases(self, session_id: str | None = None) -> list[ABCaseRow]:
        """Every A/B case (of one session), oldest first."""
        return [ABCaseRow(**row) for row in self._rows(
            tables.ab_cases, ABCaseRow.__dataclass_fields__, session_id, "verdict",
            AB_CASE_OUTCOME)]

    def sessions(self) -> list[SessionRow]:
        columns = [tables.sessions.c[name] for name in SessionRow.__dataclass_fields__]
        with self.engine.connect() as connection:
            return [SessionRow(*row) for row in connection.execute(
                sa.select(*columns).order_by(tables.sessions.c.started, tables.sessions.c.id))]

    def counts(self) -> dict[str, int]:
        with self.engine.connect() as connection:
            return {table.name: int(connection.execute(
                sa.select(sa.func.count()).select_from(table)).scalar_one())
                for table in (tables.sessions, tables.runs, tables.failures, tables.ab_cases,
                              tables.bisects, tables.notifications)}


def _case_ids(connection: sa.Connection, table: sa.Table, session_id: str) -> set[str]:
    return set(connection.execute(sa.select(table.c.case_id).where(
        table.c.session_id == session_id)).scalars())


def _run_row(session: SessionRow, kept: Mapping[str, Any]) -> dict[str, Any]:
    # A run kept before statuses lost their reasons (`faster: baseline stale`) is stored as now.
    verdict = current_status(str(kept.get("verdict", "")))
    document = {**kept, "verdict": verdict} if "verdict" in kept else dict(kept)
    hard = document.get("fingerprint", {}).get("hard", {})
    return {"session_id": session.id, "case_id": document["case_id"],
            "machine_key": session.machine_key, "when": timestamps.utc(document["when"]),
            "tensorflow": str(hard.get("tensorflow") or ""),
            "git_hash": str(hard.get("tensorflow_git") or ""),
            "examples_per_sec": float(document["examples_per_sec"]),
            "verdict": verdict, "document": document,
            "reason": str(document.get("reason") or ""),
            "flagged": str((document.get("figures") or {}).get("figures_flagged") or ""),
            "scaling_efficiency": number(document.get("scaling_efficiency")),
            "peak_memory_bytes": number(document.get("peak_memory_bytes")),
            "compile_cpu_s": number(document.get("compile_cpu_s")),
            "mfu": number((document.get("figures") or {}).get("mfu")),
            "machine_kind": kind_of_key(session.machine_key), "series_key": series_key(hard)}

