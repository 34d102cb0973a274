"""The results store on real databases: SQLite files and a PostgreSQL server the tests start
(tests/helpers/postgres_server.py). Writers are real processes; nothing here is a mock."""

from __future__ import annotations

import datetime
import json
from dataclasses import replace
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.helpers import gate_runs, old_times
from tests.helpers.postgres_server import _free_port
from tfperf.commands import store_import
from tfperf.storage import database, formats, pruning, stored_runs, tables
from tfperf.storage.errors import StoreUnavailable
from tfperf.storage.results_store import FailureRow, ResultsStore, SessionRow
from tfperf.storage.timestamps import utc


def test_bad_or_unreachable_stores_are_refused_in_one_line(tmp_path: Path) -> None:
    port = _free_port()  # nothing listens there
    cases = {
        f"postgresql://nobody@127.0.0.1:{port}/results": "cannot be reached: ",
        "mysql://me@host/db": "is neither SQLite nor PostgreSQL; valid: sqlite:///PATH",
        "not a url": "is not a database URL; valid: ",
        "sqlite://": "names no file",
    }
    for url, said in cases.items():
        with pytest.raises(StoreUnavailable, match=said) as raised:
            ResultsStore.open(url)
        assert "\n" not in str(raised.value)
    with pytest.raises(StoreUnavailable) as hidden:
        ResultsStore.open(f"postgresql://me:secret@127.0.0.1:{port}/results")
    assert "secret" not in str(hidden.value)


def test_the_head_read_from_file_names_and_the_revision_read_by_sql_are_alembic_s(
        tmp_path: Path) -> None:
    """database.head and database.current spare every store's opener alembic's scripts: they
    must say what alembic says, at every revision."""
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    scripts = ScriptDirectory.from_config(database._config())
    assert database.head() == scripts.get_current_head()
    engine = database.connect(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    try:
        for revision in [None, *reversed([s.revision for s in scripts.walk_revisions()])]:
            if revision is not None:
                assert database.migrate(engine, to=revision) == revision
            with engine.connect() as connection:
                said = MigrationContext.configure(connection).get_current_revision()
                assert database.current(connection) == said == revision
    finally:
        engine.dispose()


def test_runs_kept_as_faster_baseline_stale_are_faster_from_0008(tmp_path: Path) -> None:
    """A status is kept apart from its reason: the runs a store kept with the two glued are
    brought to the status alone, their reason as it was."""
    url = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    engine = database.connect(url)
    database.migrate(engine, to="0007")
    document = {**gate_runs.run(1150.0, 5).to_json(), "verdict": "faster: baseline stale",
                "reason": "faster: throughput +15.0% (...): baseline stale"}
    with engine.begin() as connection:
        connection.execute(tables.sessions.insert().values(
            id="s8", kind="measured", tier="smoke", machine_key="k", commit="",
            started=utc(document["when"]), source="session"))
        connection.execute(tables.runs.insert().values(
            session_id="s8", case_id=gate_runs.CASE, machine_key="k", when=utc(document["when"]),
            tensorflow="2.21.0", git_hash="", examples_per_sec=1150.0,
            verdict="faster: baseline stale", reason=document["reason"], document=document))
    engine.dispose()
    store = ResultsStore.open(url)
    try:
        with store.engine.connect() as connection:
            verdicts = connection.execute(sa.select(tables.runs.c.verdict)).scalars().all()
        assert verdicts == ["faster"]
        (kept,) = stored_runs.StoredRuns(store, "k").of(gate_runs.CASE)
        assert kept.verdict == "faster" and kept.reason == document["reason"]
    finally:
        store.close()


def test_runs_kept_before_0004_get_their_reason_and_figures_as_columns(tmp_path: Path) -> None:
    """A store at 0003 (runs' figures and reasons in their documents only) is brought to the
    newest schema on open, each run's new columns filled from its document."""
    url = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    engine = database.connect(url)
    database.migrate(engine, to="0003")
    document = {**gate_runs.run(900.0, 5).to_json(), "reason": "ok: throughput -1.0% (...)",
                "compile_cpu_s": 1.25, "figures": {"mfu": 0.31}}
    old_sessions, old_runs = (sa.Table(name, sa.MetaData(), autoload_with=engine)
                              for name in ("sessions", "runs"))
    with engine.begin() as connection:
        connection.execute(old_sessions.insert().values(
            id="s5", kind="measured", tier="smoke", machine_key="k", commit="",
            started=document["when"], source="session"))
        connection.execute(old_runs.insert().values(
            session_id="s5", case_id=gate_runs.CASE, machine_key="k", when=document["when"],
            tensorflow="2.21.0", git_hash="", examples_per_sec=900.0, verdict="ok",
            document=document))
    engine.dispose()
    store = ResultsStore.open(url)
    try:
        with store.engine.connect() as connection:
            assert database.current(connection) == database.head() == "0009"
            (row,) = connection.execute(sa.select(
                tables.runs.c.reason, tables.runs.c.compile_cpu_s, tables.runs.c.mfu,
                tables.runs.c.peak_memory_bytes, tables.runs.c.scaling_efficiency)).all()
        assert tuple(row) == ("ok: throughput -1.0% (...)", 1.25, 0.31, 1e8, None)
        assert store.runs()[0]["reason"] == "ok: throughput -1.0% (...)"  # the document as kept
    finally:
        store.close()


def test_a_run_added_now_has_its_reason_and_figures_as_columns(tmp_path: Path) -> None:
    store = ResultsStore.open(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    try:
        row = SessionRow("s6", "measured", "smoke", "k", "", utc("2026-11-06"))
        document = {**gate_runs.run(900.0, 6).to_json(), "reason": "ok: throughput +0.1% (...)",
                    "figures": {"mfu": 0.42, "figures_flagged": "yardstick disturbed"}}
        assert store.add_runs(row, [document]) == 1
        with store.engine.connect() as connection:
            (kept,) = connection.execute(sa.select(
                tables.runs.c.reason, tables.runs.c.flagged, tables.runs.c.mfu,
                tables.runs.c.compile_cpu_s, tables.runs.c.peak_memory_bytes)).all()
        assert tuple(kept) == ("ok: throughput +0.1% (...)", "yardstick disturbed", 0.42, 2.0, 1e8)
    finally:
        store.close()


def test_a_store_at_0003_keeps_every_row_and_its_times_become_instants(tmp_path: Path) -> None:
    """Times kept as text in every zone and shape an ISO 8601 writer uses are brought
    to timestamps on open, each the same instant, compared by the database. (PostgreSQL:
    tests/real/test_results_store.py.)"""
    url = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    old_times.fill_at_0003(url)
    store = ResultsStore.open(url)
    try:
        assert store.counts() == {"sessions": 5, "runs": 5, "failures": 5, "ab_cases": 5,
                                  "bisects": 5, "notifications": 0}
        old_times.check_instants(store.engine)
        # What the store gives back is aware and in UTC, and the documents are as kept.
        assert all(f.when.tzinfo is datetime.UTC for f in store.failures())
        assert {r["when"] for r in store.runs()} == set(old_times.TIMES)
        # Pruning asks the database which rows are older: 01:00+02:00 on the 10th is the 9th.
        chosen = pruning.plan(store.engine, "2026-01-10", keep_runs=1)
        assert chosen.sessions == ["s0", "s1", "s2"] and len(chosen.runs) == 3
    finally:
        store.close()


def test_a_time_that_is_not_one_stops_the_migration_and_leaves_the_store_as_it_was(
        tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    old_times.fill_at_0003(url, {**old_times.TIMES, "t": old_times.TIMES["2026-01-10"]})
    with pytest.raises(StoreUnavailable) as raised:
        ResultsStore.open(url)
    assert str(raised.value) == ("results store: sessions row 's5' has time 't', not an ISO 8601 "
                                 "time; nothing was changed")
    engine = database.connect(url)
    try:
        with engine.connect() as connection:
            assert database.current(connection) == "0003"
            assert connection.execute(sa.text("SELECT started FROM sessions WHERE id = 's0'")
                                      ).scalar() == "2026-01-10T01:00:00+02:00"
    finally:
        engine.dispose()


def test_a_measured_file_s_failures_are_imported_once_each(tmp_path: Path) -> None:
    """A session file keeps its failures beside its runs; importing it adds them, a
    case that failed twice (its call, then its teardown) as one, and importing again adds
    nothing."""
    crash = FailureRow("c1", utc("2026-11-28T01:00:00+00:00"), "crash", "measuring",
                       "worker killed by SIGSEGV", "c1.log", "Fatal Python error")
    kept = tmp_path / "s8.json"  # as session_files.History.keep writes it
    kept.write_text(json.dumps({
        "format": formats.SESSION_FORMAT, "session": "s8", "tier": "smoke", "machine_key": "k",
        "when": "2026-11-28T01:00:00+00:00", "commit": "", "runs": [],
        "failures": [stored_runs.failure_json(f) for f in (
            crash, replace(crash, cause="error", message="teardown"),
            replace(crash, case_id="c2", cause="timeout"))]}))
    found = store_import.read([kept])
    store = ResultsStore.open(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    try:
        assert [store_import.write(store, k) for k in found.kept] == [2]
        assert [store_import.missing(store, k) for k in found.kept] == [[]]
        assert [store_import.write(store, k) for k in found.kept] == [0]
        assert [(f.case_id, f.cause, f.message, f.log_tail) for f in store.failures()] == [
            ("c1", "crash", "worker killed by SIGSEGV", "Fatal Python error"),
            ("c2", "timeout", "worker killed by SIGSEGV", "Fatal Python error")]
    finally:
        store.close()


def test_a_file_or_an_export_kept_with_a_glued_status_enters_the_store_as_the_status_alone(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Importing a session file, or loading an export, made before a status and its reason
    were apart brings no `faster: baseline stale` back: the dashboard and the findings read."""
    from tests.helpers import in_process
    from tfperf.commands import tfperf_store
    from tfperf.dashboard import site_data
    from tfperf.storage import exports, findings

    run = {**gate_runs.run(1150.0, 5).to_json(), "verdict": "faster: baseline stale",
           "reason": "faster: throughput +15.0% (...): baseline stale"}
    kept = tmp_path / "kept" / f"{run['session']}.json"
    kept.parent.mkdir()
    kept.write_text(json.dumps({"format": "tfperf-session/1", "session": run["session"],
                                "tier": "smoke", "machine_key": "k", "runs": [run]}))
    url = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    done = in_process.run(tfperf_store.main, "--store", url, "import", str(kept), capsys=capsys)
    assert done.code == 0, done
    store = ResultsStore.open(url)
    try:
        with store.engine.connect() as connection:
            (verdict,) = connection.execute(sa.select(tables.runs.c.verdict)).scalars()
        assert verdict == "faster" and store.runs()[0]["verdict"] == "faster"
        site_data.read(store)
        findings.read(store.engine)
        exports.export(store.engine, tmp_path / "export", "jsonl")
    finally:
        store.close()
    # An export made before: its runs' verdicts spelt the old way, loaded into a new store.
    (rows,) = [p for p in (tmp_path / "export").iterdir() if p.name.startswith("runs")]
    lines = [json.loads(line) for line in rows.read_text().splitlines()]
    for line in lines:
        line["verdict"] = line["document"]["verdict"] = "faster: baseline stale"
    rows.write_text("".join(json.dumps(line) + "\n" for line in lines))
    again = ResultsStore.open(f"sqlite:///{tmp_path / 'again.sqlite3'}")
    try:
        exports.load(again.engine, exports.read(tmp_path / "export")[1])
        assert again.runs()[0]["verdict"] == "faster"
        site_data.read(again)
    finally:
        again.close()
