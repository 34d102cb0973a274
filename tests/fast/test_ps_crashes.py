"""benchmarks/ps_crashes.py: a crash read from the suite's output or from a failed self-test's,
arms run in turn and resumed from what the file holds, and a report that never pools settings
and tests the first label against the others. Running the sessions starts processes: the
pilot's lines are in benchmarks/data/ps_crashes/."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import benchmark_scripts

ps_crashes = benchmark_scripts.load("ps_crashes")

CASE_ID = "tinycnn-cpu1-workers2-xla_off-NHWC-default-parameter_server-fp32-synthetic-prep_host"
CRASH = (f"{CASE_ID}: crash: task chief:0 of the cluster: worker killed by SIGSEGV while "
         "compiling (log: /tmp/b/x.log)")


def test_a_crash_is_read_from_the_suite_s_output_and_from_a_failed_self_test_s() -> None:
    suite = f"{CASE_ID}  FAILED (crash)\n{CRASH}\n"
    selftest = ("E       AssertionError: ===== test session starts =====\n"
                f"E         {CASE_ID}  FAILED (crash)\nE         {CRASH}\n"
                "FAILED tests/real/test_multiprocess.py::test_cluster_strategies_run_as_named\n")
    for output in (suite, selftest):
        [(case, cause, message)] = ps_crashes.FAILURE.findall(output)
        assert (case, cause) == (CASE_ID, "crash")
        assert ps_crashes.SIGNAL.search(message).group(1) == "SIGSEGV"
        assert ps_crashes.LOG.search(message).group(1) == "/tmp/b/x.log"
    assert ps_crashes.FAILED_TEST.findall(selftest) == [
        "tests/real/test_multiprocess.py::test_cluster_strategies_run_as_named"]


def test_arms_take_turns_reversed_every_other_round_and_resume_from_what_is_kept() -> None:
    before = ps_crashes.Arm("before", Path("/tmp/b"), "0b1fa33")
    after = ps_crashes.Arm("after", Path("/tmp/a"), "166676a")
    assert ps_crashes._turns([before, after], {before: 1, after: 0}, 3) == [
        (before, 2), (after, 1), (after, 2), (before, 3), (after, 3)]
    assert ps_crashes._turns([before, after], {before: 3, after: 3}, 3) == []


def _row(label: str, ended: str, **setting: Any) -> dict[str, Any]:
    return {"machine_key": "amd", "label": label, "commit": label[:3], "run": 1, "ended": ended,
            "cause": "crash" if ended == "crash" else None, "message": None, "stack": [],
            "signal": "SIGSEGV" if ended == "crash" else None,
            "seconds": 70.0, "selftests": "tests/real/test_multiprocess.py", "workload": None,
            "rounds": None, "steps": None, "neighbours": 0, "cpus": [0, 1], "env": {},
            "pytest_args": ["-n", "0"], **setting}


def test_the_report_tests_before_against_after_within_one_setting_only(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [*[_row("before", "crash")] * 6, *[_row("before", "passed")] * 144,
            *[_row("after", "passed")] * 150,
            _row("after", "crash", neighbours=2)]  # another setting: never pooled
    kept = tmp_path / "runs.jsonl.gz"
    with gzip.open(kept, "wt", encoding="utf-8") as sink:
        sink.writelines(json.dumps(row) + "\n" for row in rows)
    assert ps_crashes.main(["report", str(kept)]) == 0
    out = capsys.readouterr().out
    whole = "amd | tests/real/test_multiprocess.py | 0 | 2 | -n 0"
    assert f"{whole} | before (bef) | 150 | 6 | 0 | 4.0% [1.5%, 8.5%] | 70" in out, out
    assert f"{whole} | after (aft) | 150 | 0 | 0 | 0.0% [0.0%, 2.4%] | 70" in out, out
    assert "crashes 6/150 against 0/150; p = 0.0148 that before crashes more often, 0.0297 " \
           "two-sided" in out, out
    assert "amd | tests/real/test_multiprocess.py | 2 | 2 | -n 0 | after (aft) | 1 | 1 |" in out
    assert ps_crashes._same(rows[0], {k: rows[0][k] for k in ("selftests", "cpus", "env")})
    assert not ps_crashes._same(rows[-1], {"neighbours": 0, "cpus": [0, 1]})


def test_in_a_whole_self_test_run_only_a_process_killed_by_a_signal_counts_as_a_crash() -> None:
    on_purpose = {"ended": "crash", "selftests": "tests/real/test_multiprocess.py",
                  "signal": None, "message": "task worker:1 of the cluster: worker exited with "
                                             "code 3 while measuring"}
    assert not ps_crashes.crashed(on_purpose)
    assert ps_crashes.crashed({**on_purpose, "signal": "SIGSEGV"})
    assert ps_crashes.crashed({**on_purpose, "selftests": None})  # the case alone: any crash
    assert not ps_crashes.crashed({**on_purpose, "ended": "passed", "signal": "SIGSEGV"})
