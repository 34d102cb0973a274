"""A measured session's file, written from the results store.

The store is where a session's results are true: each case is written to it as it ends, and
the gate reads its history from it. The session file is the store's export of one session, the
form that a CI artifact, the perf-history branch and `tfperf-store import` carry from one store
to another: each run's document as the store keeps it (its reported figures too) and every
failure, so that importing the file elsewhere rebuilds the same rows, and judging it again
there gives the same verdicts and figures."""

from __future__ import annotations

from pathlib import Path

from tfperf.storage import stored_runs
from tfperf.storage.results_store import ResultsStore
from tfperf.storage.session_files import History


def write(store: ResultsStore, history: History, session: str, tier: str, machine_key: str
          ) -> Path:
    """The session's file in `history`, rewritten from what the store holds of it now."""
    return history.write(session, tier, machine_key, store.runs(session_id=session),
                         [stored_runs.failure_json(f) for f in store.failures(session)])
