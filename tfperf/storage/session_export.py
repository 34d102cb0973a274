"""A measured session's file, written from the results store.

The store is where a session's results are true: each case is written to it as it ends, and
the gate reads its history from it. The session file is the store's export of one session, the
form that a CI artifact, the perf-history branch and `tfperf-store import` carry from one store
to another: each run's document as the store keeps it (its reported figures too) and every
failure, so that importing the file elsewhere rebuilds the same rows, and judging it again
there gives the same verdicts and figures."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from tfperf.storage import stored_runs
from tfperf.storage.errors import StorageError
from tfperf.storage.results_store import FailureRow, ResultsStore
from tfperf.storage.session_files import History, Run


def write(store: ResultsStore, history: History, session: str, tier: str, machine_key: str
          ) -> Path:
    """The session's file in `history`, rewritten from what the store holds of it now."""
    return history.write(session, tier, machine_key, store.runs(session_id=session),
                         [stored_runs.failure_json(f) for f in store.failures(session)])


def keep(keeper: stored_runs.Keeper, history: History, tier: str, runs: Sequence[Run],
         figures: Mapping[str, Mapping[str, Any]], failures: Sequence[FailureRow],
         refresh: bool = False) -> Path:
    """Write the session's runs to the store (with `refresh`, their last word on runs kept
    already), then its file from the store. Where the store cannot take or give them, the file
    keeps what the session has, so that nothing measured is lost, and the store's error goes
    on."""
    session, key = keeper.row.id, keeper.row.machine_key
    try:
        keeper.runs(runs, figures, refresh)
        return write(keeper.store, history, session, tier, key)
    except (StorageError, sa.exc.SQLAlchemyError):
        history.write(session, tier, key, stored_runs.documents(runs, figures),
                      [stored_runs.failure_json(f) for f in failures])
        raise
