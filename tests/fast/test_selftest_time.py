"""benchmarks/selftest_time.py: pytest's seconds read from `./run test`'s output, medians and
ratios per machine key from kept runs, and bad input refused in one line before any clone.
Timing a clone starts processes (git, ./run): benchmarks/results/selftest_time.md
(2026-11-29, night) has what it measured."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tests.helpers import benchmark_scripts

selftest_time = benchmark_scripts.load("selftest_time")

RUN_TEST_TAIL = """Success: no issues found in 212 source files
Contracts: 4 kept, 0 broken.
........................................................................ [ 94%]
..............................                                           [100%]
533 passed, 1 skipped in 282.31s (0:04:42)
"""


def test_pytest_s_seconds_are_read_from_its_summary_not_from_the_linters() -> None:
    assert selftest_time.pytest_seconds(RUN_TEST_TAIL) == (282.31, "533 passed, 1 skipped")
    assert selftest_time.pytest_seconds("1 failed, 532 passed in 301.20s (0:05:01)\n") == \
        (301.2, "1 failed, 532 passed")
    assert selftest_time.pytest_seconds("Success: no issues found in 212 source files\n") is None


def _row(key: str, sha: str, seconds: float, exit_status: int = 0) -> dict[str, object]:
    return {"machine_key": key, "commit": sha, "rev": sha, "round": 1, "exit": exit_status,
            "pytest_s": seconds, "outcome": "533 passed", "whole_s": seconds + 55, "tail": ""}


def test_the_report_gives_each_commit_s_median_and_ratio_within_its_own_machine_key(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [_row("amd", "old", 344.7), _row("amd", "new", 282.3), _row("amd", "old", 366.3),
            _row("amd", "new", 284.9), _row("amd", "new", 999.0, exit_status=1),
            _row("intel", "new", 500.0)]
    kept = tmp_path / "runs.jsonl.gz"
    with gzip.open(kept, "wt", encoding="utf-8") as sink:
        sink.writelines(json.dumps(row) + "\n" for row in rows)
    # A failed run is left out of the median; a key is never pooled with another.
    assert selftest_time.passed(rows) == {("amd", "old"): [344.7, 366.3],
                                          ("amd", "new"): [282.3, 284.9],
                                          ("intel", "new"): [500.0]}
    assert selftest_time.main(["report", str(kept)]) == 0
    out = capsys.readouterr().out
    assert "new | 2 | 282.3, 284.9 | 283.6 | 0.798" in out, out
    assert "old | 2 | 344.7, 366.3 | 355.5 | 1.000" in out, out
    assert "new | 1 | 500.0 | 500.0 | 1.000" in out, out
    assert "failed: amd new round 1 (exit 1)" in out, out


@pytest.mark.parametrize(("args", "said"), [
    (["run", "HEAD", "--rounds", "0"], "error: --rounds: 0 is not a whole number from 1"),
    (["report", "x.jsonl.gz", "--elsewhere", "37366cd=slow"],
     "error: argument --elsewhere: '37366cd=slow': expected REV=SECONDS, e.g. 37366cd=771.1"),
    (["report", "x.jsonl.gz", "--elsewhere", "37366cd=nan"],
     "error: argument --elsewhere: '37366cd=nan': expected REV=SECONDS, e.g. 37366cd=771.1"),
])
def test_bad_input_is_one_line_before_any_clone(
        args: list[str], said: str, capsys: pytest.CaptureFixture[str]) -> None:
    # The fast lane fails any process: no clone, no git, not even to resolve the revision.
    with pytest.raises(SystemExit) as stopped:
        selftest_time.main(args)
    assert stopped.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()[-1:]
    assert line.endswith(said), line
