"""A session's writes to the results store, in a process of its own (tests/test_results_store.py
starts several at once, or kills one mid-write).

    python -m tests.helpers.store_writer URL SESSION CASES            # CASES runs, one write each, twice
    python -m tests.helpers.store_writer URL SESSION CASES --hold     # one write of CASES runs, held open
    python -m tests.helpers.store_writer URL SESSION CASES --no-upgrade   # as an older tfperf would
"""

from __future__ import annotations

import sys
import time

import sqlalchemy as sa

from tfperf.storage import database, tables
from tfperf.storage.results_store import FailureRow, ResultsStore, SessionRow
from tfperf.storage.timestamps import utc


def run_document(session: str, case: int) -> dict[str, object]:
    return {"case_id": f"case-{case:03d}", "when": f"2026-11-25T00:00:{case % 60:02d}",
            "session": session, "examples_per_sec": 100.0 + case,
            "round_examples_per_sec": [100.0 + case] * 3,
            "fingerprint": {"hard": {"tensorflow": "2.21.0", "tensorflow_git": "v2.21.0"},
                            "soft": {}}}


def main() -> None:
    url, session, cases = sys.argv[1], sys.argv[2], int(sys.argv[3])
    row = SessionRow(session, "measured", "smoke", "machine", "abc", utc("2026-11-25T00:00:00"))
    documents = [run_document(session, case) for case in range(cases)]
    if "--no-upgrade" in sys.argv:
        _as_an_older_tfperf(url, row, documents)
        print("done", flush=True)
        return
    store = ResultsStore.open(url)
    if "--hold" in sys.argv:
        with store.engine.begin() as connection:
            connection.execute(tables.sessions.insert().values(**vars(row)))
            connection.execute(tables.runs.insert(), [
                {"session_id": session, "case_id": d["case_id"], "machine_key": "machine",
                 "when": d["when"], "tensorflow": "2.21.0", "git_hash": "v2.21.0",
                 "examples_per_sec": d["examples_per_sec"], "verdict": "", "document": d}
                for d in documents])
            print("inside", flush=True)
            time.sleep(600)  # killed here, its transaction open
        return
    # As a session does: each case written as it ends, every earlier one again with it.
    for end in range(1, cases + 1):
        store.add_runs(row, documents[:end])
    store.add_failures(row, [FailureRow("case-failed", utc("2026-11-25T00:01:00"), "crash",
                                        "measuring", "worker killed by SIGSEGV", "w.log", "")])
    store.add_runs(row, documents)  # once more: nothing is added twice
    store.close()
    print("done", flush=True)


def _as_an_older_tfperf(url: str, row: SessionRow, documents: list[dict[str, object]]) -> None:
    """The writes an older tfperf makes, at the schema the store is at: only the columns that
    schema has (its tables read from the database, not from tables.py)."""
    engine = database.connect(url)
    old = sa.MetaData()
    old.reflect(engine, only=["sessions", "runs", "failures"])
    with engine.begin() as connection:
        # An older tfperf kept its times as text: ISO 8601, as its files hold them.
        sessions = old.tables["sessions"]
        connection.execute(sessions.insert().values(
            **{k: v for k, v in vars(row).items() if k in sessions.c and k != "started"},
            started=row.started.isoformat()))
        connection.execute(old.tables["runs"].insert(), [
            {"session_id": row.id, "case_id": d["case_id"], "machine_key": row.machine_key,
             "when": d["when"], "tensorflow": "2.21.0", "git_hash": "v2.21.0",
             "examples_per_sec": d["examples_per_sec"], "verdict": "", "document": d}
            for d in documents])
        connection.execute(old.tables["failures"].insert().values(
            session_id=row.id, machine_key=row.machine_key,
            **{**vars(FailureRow("case-failed", utc("2026-11-25T00:01:00"), "crash", "measuring",
                                 "worker killed by SIGSEGV", "w.log", "")),
               "when": "2026-11-25T00:01:00"}))
    engine.dispose()


if __name__ == "__main__":
    main()
