"""A measured session's file is the store's export of the session: what the store holds of it,
its last word on each case too; where the store fails, the file still keeps what the session
measured, and the store's error goes on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.helpers import gate_runs
from tfperf.storage import session_export, session_files, stored_runs
from tfperf.storage.results_store import ResultsStore, SessionRow
from tfperf.storage.session_files import History
from tfperf.storage.timestamps import utc


@pytest.fixture(autouse=True)
def _no_git(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session_files, "_commit", lambda: "")  # git is a process


def _keeper(tmp_path: Path) -> stored_runs.Keeper:
    store = ResultsStore.open(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    return stored_runs.Keeper(store, SessionRow("s1", "measured", "smoke", "k", "",
                                                utc("2026-12-06T04:00")))


def test_the_file_is_what_the_store_holds_with_the_session_s_last_word(tmp_path: Path) -> None:
    keeper = _keeper(tmp_path)
    history = History(tmp_path / "history")
    run = gate_runs.run(900.0, 5)
    figures = {run.case_id: {"mfu": 0.5, "figures_flagged": []}}
    path = session_export.keep(keeper, history, "smoke", [run], figures, [])
    # The whole session's word at its end: a flag on a case kept already reaches both.
    flagged = {run.case_id: {"mfu": 0.5, "figures_flagged": ["yardstick far from the others'"]}}
    assert session_export.keep(keeper, history, "smoke", [run], flagged, [], refresh=True) == path
    (kept,) = json.loads(path.read_text())["runs"]
    assert kept["figures"]["figures_flagged"] == "yardstick far from the others'"
    assert keeper.store.runs(session_id="s1") == [kept]
    keeper.store.close()


def test_where_the_store_fails_the_file_keeps_what_was_measured(tmp_path: Path) -> None:
    keeper = _keeper(tmp_path)
    with keeper.store.engine.begin() as connection:
        connection.execute(sa.text("DROP TABLE runs"))
    history = History(tmp_path / "history")
    run = gate_runs.run(900.0, 5)
    with pytest.raises(sa.exc.SQLAlchemyError):
        session_export.keep(keeper, history, "smoke", [run], {run.case_id: {"mfu": 0.5}}, [])
    (path,) = history.sessions()
    (kept,) = json.loads(path.read_text())["runs"]
    assert kept["case_id"] == run.case_id and kept["figures"]["mfu"] == 0.5
    keeper.store.close()
