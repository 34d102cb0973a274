"""A session's writes to the results store, in a process of its own (tests/test_results_store.py
starts several at once, or kills one mid-write).

    python -m tests.helpers.store_writer URL SESSION CASES            # CASES runs, one write each, twice
    python -m tests.helpers.store_writer URL SESSION CASES --hold     # one write of CASES runs, held open
    python -m tests.helpers.store_writer URL SESSION CASES --no-upgrade   # to the schema it finds
"""

from __future__ import annotations

import sys
import time

from tfperf.storage import database, tables
from tfperf.storage.results_store import FailureRow, ResultsStore, SessionRow


def run_document(session: str, case: int) -> dict[str, object]:
    return {"case_id": f"case-{case:03d}", "when": f"2026-11-25T00:00:{case % 60:02d}",
            "session": session, "examples_per_sec": 100.0 + case,
            "round_examples_per_sec": [100.0 + case] * 3,
            "fingerprint": {"hard": {"tensorflow": "2.21.0", "tensorflow_git": "v2.21.0"},
                            "soft": {}}}


def main() -> None:
    url, session, cases = sys.argv[1], sys.argv[2], int(sys.argv[3])
    # --no-upgrade: write to the store at the schema it is at (an older tfperf's session).
    store = ResultsStore(database.connect(url)) if "--no-upgrade" in sys.argv \
        else ResultsStore.open(url)
    row = SessionRow(session, "measured", "smoke", "machine", "abc", "2026-11-25T00:00:00")
    documents = [run_document(session, case) for case in range(cases)]
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
    store.add_failures(row, [FailureRow("case-failed", "2026-11-25T00:01:00", "crash",
                                        "measuring", "worker killed by SIGSEGV", "w.log", "")])
    store.add_runs(row, documents)  # once more: nothing is added twice
    store.close()
    print("done", flush=True)


if __name__ == "__main__":
    main()
