"""The results store on real databases: SQLite files and a PostgreSQL server the tests start
(tests/helpers/postgres_server.py). Writers are real processes; nothing here is a mock."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.postgres_server import _free_port
from tfperf.storage.errors import StoreUnavailable
from tfperf.storage.results_store import ResultsStore


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
