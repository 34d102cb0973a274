"""The results store on real databases: SQLite files and a PostgreSQL server the tests start
(tests/helpers/postgres_server.py). Writers are real processes; nothing here is a mock."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.helpers import gate_runs
from tests.helpers.postgres_server import _free_port
from tfperf.storage import database, tables
from tfperf.storage.errors import StoreUnavailable
from tfperf.storage.results_store import ResultsStore, SessionRow


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


def test_runs_kept_before_0004_get_their_reason_and_figures_as_columns(tmp_path: Path) -> None:
    """A store at 0003 (runs' figures and reasons in their documents only) is brought to the
    newest schema on open, each run's new columns filled from its document."""
    url = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    engine = database.connect(url)
    database.migrate(engine, to="0003")
    document = {**gate_runs.run(900.0, 5).to_json(), "reason": "ok: throughput -1.0% (...)",
                "compile_cpu_s": 1.25, "figures": {"mfu": 0.31}}
    old_runs = sa.Table("runs", sa.MetaData(), autoload_with=engine)
    with engine.begin() as connection:
        connection.execute(tables.sessions.insert().values(
            id="s5", kind="measured", tier="smoke", machine_key="k", commit="", started="t",
            source="session"))
        connection.execute(old_runs.insert().values(
            session_id="s5", case_id=gate_runs.CASE, machine_key="k", when=document["when"],
            tensorflow="2.21.0", git_hash="", examples_per_sec=900.0, verdict="ok",
            document=document))
    engine.dispose()
    store = ResultsStore.open(url)
    try:
        with store.engine.connect() as connection:
            assert database.current(connection) == database.head() == "0004"
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
        row = SessionRow("s6", "measured", "smoke", "k", "", "2026-11-06")
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
