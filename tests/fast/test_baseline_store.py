"""The versioned baseline store: concurrent writers take turns, nothing is ever overwritten,
broken entries stop with their name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tfperf.storage.baselines import BaselineEntries
from tfperf.storage.errors import StorageError
from tfperf.storage.files import write_new


def test_a_stored_file_is_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "0001.json"
    write_new(path, {"a": 1})
    with pytest.raises(StorageError, match="already exists; stored files are never overwritten"):
        write_new(path, {"a": 2})
    assert json.loads(path.read_text()) == {"a": 1}


RUN = ('{"case_id": "c", "fingerprint": {"hard": {}}, "when": "2026-11-22", "session": "s", '
       '"examples_per_sec": 10, "round_examples_per_sec": [10, 11]}')
ENTRY = ('{"format": "tfperf-baseline/1", "version": 1, "who": "me", "when": "2026-11-22", '
         '"reason": "r", "kind": "refresh", "cases": {"c": {"history_since": "", "runs": ['
         + RUN + ']}}}')


@pytest.mark.parametrize(("text", "message"), [
    ("{broken", "is not readable JSON"),
    (ENTRY.replace('"version": 1', '"version": 2'), "says version 2, its name 1"),
    (ENTRY.replace("tfperf-baseline/1", "other"),
     "is not a valid baseline entry: at format: 'tfperf-baseline/1' was expected"),
    (ENTRY.replace('"kind": "refresh"', '"kind": "edit"'),
     "at kind: 'edit' is not one of ['refresh', 'rollback']"),
    (ENTRY.replace("[10, 11]", '[10, "fast"]'),
     "at cases/c/runs/0/round_examples_per_sec/1: 'fast' is not of type 'number'"),
    (ENTRY.replace('"examples_per_sec": 10', '"examples_per_sec": -1'),
     "at cases/c/runs/0/examples_per_sec: -1 is less than or equal to the minimum of 0"),
])
def test_a_broken_entry_is_named_not_skipped(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "0001.json").write_text(text)
    with pytest.raises(StorageError) as error:
        BaselineEntries(tmp_path).active()
    assert str(tmp_path / "0001.json") in str(error.value) and message in str(error.value)


def test_rolling_back_to_a_missing_entry_lists_the_valid_ones(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match=r"no baseline entry 7 in .*; entries: none"):
        BaselineEntries(tmp_path).entry(7)


def test_a_valid_entry_reads_back(tmp_path: Path) -> None:
    (tmp_path / "0001.json").write_text(ENTRY)
    active = BaselineEntries(tmp_path).active()
    assert active is not None and active.cases["c"].runs[0].round_examples_per_sec == (10, 11)
