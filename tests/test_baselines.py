"""Baselines: stored under the machine key, compared per case, a slowed case fails."""

from __future__ import annotations

import json

from tests.conftest import MakeSuite
from tfperf.machine import detect

CASE = ("--perf-only=device_kind=cpu", "--perf-only=device_count=1", "--perf-only=xla=off",
        "--perf-only=data_format=NHWC", "--perf-only=strategy=single", "--perf-only=input=synthetic")
# Sessions on a shared 2-core machine have differed by 60% on this millisecond-step case, so the
# threshold is wide (75%: an unchanged case passes unless 4x slower) and the injected slowdown
# is far beyond it (9x the step's work, -90% throughput).
MEASURE = ("--perf-rounds=7", "--perf-steps-per-round=100", "--perf-warmup-rounds=2")


def test_no_baseline_then_refresh_then_unchanged_passes_and_slowed_fails(
        make_suite: MakeSuite) -> None:
    suite = make_suite("tinycnn")
    first = suite.runpytest(*CASE, *MEASURE)
    assert first.parseoutcomes() == {"no_baseline": 1}
    first.stdout.fnmatch_lines(["*tinycnn-cpu1-*no baseline*"])

    refresh = suite.runpytest(*CASE, *MEASURE, "--benchmark-save=refresh")
    assert refresh.parseoutcomes() == {"no_baseline": 1}
    stored = list((suite.path / "baselines" / detect().key()).glob("0001_refresh.json"))
    assert len(stored) == 1
    entry = json.loads(stored[0].read_text())["benchmarks"][0]["extra_info"]
    assert entry["case_id"] == "tinycnn-cpu1-workers1-xla_off-NHWC-default-single-fp32-synthetic-prep_host"

    unchanged = suite.runpytest(*CASE, *MEASURE, "--perf-threshold=75")
    unchanged.assert_outcomes(passed=1)
    # A shared 2-core machine can run the same code much faster than when the baseline was taken;
    # "faster" is a pass too (it means the baseline is stale), "regression" would not be.
    unchanged.stdout.re_match_lines([r".*tinycnn-cpu1-\S+\s+(ok|faster)\s.*"])

    slowed = suite.runpytest(*CASE, *MEASURE, "--perf-threshold=75",
                             "--perf-inject-slowdown=9@tinycnn")
    slowed.assert_outcomes(failed=1)
    slowed.stdout.fnmatch_lines(["*tinycnn-cpu1-*: regression: *% slower than its baseline*"])
    # The failing run was still reported and nothing stored was touched.
    assert sorted(p.name for p in stored[0].parent.iterdir()) == ["0001_refresh.json"]


def test_corrupt_baseline_stops_the_run_naming_the_file(make_suite: MakeSuite) -> None:
    suite = make_suite("tinycnn")
    folder = suite.path / "baselines" / detect().key()
    folder.mkdir(parents=True)
    (folder / "0001_broken.json").write_text("{not json")
    result = suite.runpytest(*CASE)
    result.stderr.fnmatch_lines(["ERROR: baseline file */0001_broken.json is not readable JSON*"])
    assert "test_training" not in result.stdout.str()
