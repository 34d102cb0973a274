"""A store at schema 0003 whose times are text as older tfperfs and imported files wrote them
(with microseconds or without, another zone, no zone, a date, "Z"), and what 0005 must make of
them: each row kept, its time the same instant, and the database comparing instants. Used on
SQLite (tests/fast/test_results_store.py) and PostgreSQL (tests/real/test_results_store.py)."""

from __future__ import annotations

import datetime

import sqlalchemy as sa

from tfperf.storage import database, tables

UTC = datetime.UTC
# Text order is not time order here: "01:00+02:00" is 23:00 the day before, in UTC.
TIMES = {"2026-01-10T01:00:00+02:00": datetime.datetime(2026, 1, 9, 23, 0, tzinfo=UTC),
         "2026-01-09T23:30:00.250000+00:00": datetime.datetime(2026, 1, 9, 23, 30, 0, 250000,
                                                               tzinfo=UTC),
         "2026-01-09T23:59:59": datetime.datetime(2026, 1, 9, 23, 59, 59, tzinfo=UTC),
         "2026-01-10": datetime.datetime(2026, 1, 10, tzinfo=UTC),
         "2026-01-10T00:00:01Z": datetime.datetime(2026, 1, 10, 0, 0, 1, tzinfo=UTC)}


def fill_at_0003(url: str, times: dict[str, datetime.datetime] = TIMES) -> None:
    """Bring a new store to 0003 and write one session, run, failure, A/B case and bisection
    per time, through the tables that schema has (read from the database, not tables.py)."""
    engine = database.connect(url)
    database.migrate(engine, to="0003")
    old = sa.MetaData()
    old.reflect(engine)
    rows = [(f"s{i}", text) for i, text in enumerate(times)]
    with engine.begin() as connection:
        connection.execute(old.tables["sessions"].insert(), [
            {"id": sid, "kind": "measured", "tier": "smoke", "machine_key": "k", "commit": "",
             "started": text, "source": "session"} for sid, text in rows])
        connection.execute(old.tables["runs"].insert(), [
            {"session_id": sid, "case_id": "c", "machine_key": "k", "when": text,
             "tensorflow": "2.21.0", "git_hash": "", "examples_per_sec": 1.0, "verdict": "ok",
             "document": {"case_id": "c", "when": text}} for sid, text in rows])
        connection.execute(old.tables["failures"].insert(), [
            {"session_id": sid, "case_id": "c", "machine_key": "k", "when": text,
             "cause": "crash", "phase": "", "message": "", "log_path": "", "log_tail": ""}
            for sid, text in rows])
        connection.execute(old.tables["ab_cases"].insert(), [
            {"session_id": sid, "case_id": "c", "when": text, "verdict": "same", "pairs": 16,
             "document": {}} for sid, text in rows])
        connection.execute(old.tables["bisects"].insert(), [
            {"id": f"b{sid}", "when": text, "machine_key": "k", "case_id": "c",
             "kind": "commits", "outcome": "found", "document": {}} for sid, text in rows])
    engine.dispose()


def check_instants(engine: sa.Engine, times: dict[str, datetime.datetime] = TIMES) -> None:
    """Every row kept with its time as the same instant; ORDER BY and < done by the database
    in time order, not text order."""
    expected = {f"s{i}": moment for i, moment in enumerate(times.values())}
    chronological = sorted(expected, key=expected.__getitem__)
    midnight = datetime.datetime(2026, 1, 10, tzinfo=UTC)
    with engine.connect() as connection:
        for table, key, column in ((tables.sessions, "id", "started"),
                                   (tables.runs, "session_id", "when"),
                                   (tables.failures, "session_id", "when"),
                                   (tables.ab_cases, "session_id", "when"),
                                   (tables.bisects, "id", "when")):
            time = table.c[column]
            ordered = connection.execute(sa.select(table.c[key], time).order_by(time)).all()
            found = {str(k).removeprefix("b"): when for k, when in ordered}
            assert found == expected, (table.name, found)
            assert [str(k).removeprefix("b") for k, _ in ordered] == chronological, table.name
            before = connection.execute(sa.select(table.c[key]).where(time < midnight)).scalars()
            assert {str(k).removeprefix("b") for k in before} == {
                k for k, moment in expected.items() if moment < midnight}, table.name
