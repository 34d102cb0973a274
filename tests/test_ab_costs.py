"""What each A/B side costs besides its steps: compile time, time to the first step, peak
device and host memory, B/A over the duets with a verdict against a floor of their own. Real
sessions: an A/A says no cost is higher and memory the same; side B made to compile 2 s longer
and hold 300 MiB more (--perf-inject-cost) fails the case `costs_more`, naming each."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import MakeSuite
from tfperf.ab import costs
from tfperf.bisect.search import Judged
from tfperf.bisect.step_runner import Selection, StepRunner
from tfperf.options.ab_settings import ABSettings

CASE = ("-k", "tinycnn and cpu1 and workers1 and xla_off and NHWC and default and single and "
        "fp32 and synthetic and prep_host")
AB = ("--perf-baseline=current", "--perf-ab-floor=20", "--perf-ab-pairs=16:16",
      "--perf-ab-duets=4")


def _duets(a: list[float], b: list[float], key: str = "compile_cpu_s") -> list[dict[str, Any]]:
    empty = {c.key: None for c in costs.COSTS}
    return [{"duet": n, "A": {**empty, key: x}, "B": {**empty, key: y}}
            for n, (x, y) in enumerate(zip(a, b, strict=True), 1)]


def test_a_cost_is_judged_over_the_duets_against_its_own_floor() -> None:
    settings = ABSettings()
    compile_time = costs.COSTS[0]
    higher = costs.judge(_duets([1.0, 1.1, 0.9, 1.0], [2.0, 2.3, 1.7, 2.1]), compile_time,
                         settings)
    assert higher.status == costs.HIGHER and higher.low is not None and higher.low > 1.25
    assert higher.confidence == pytest.approx(1 - settings.alpha / 4)  # split over 4 costs
    same = costs.judge(_duets([1.0, 1.1, 0.9, 1.0], [1.02, 1.08, 0.91, 0.99]), compile_time,
                       settings)
    assert same.status == costs.SAME
    lower = costs.judge(_duets([2.0, 2.2, 1.8, 2.0], [1.0, 1.1, 0.9, 1.0]), compile_time,
                        settings)
    assert lower.status == costs.LOWER
    wide = costs.judge(_duets([1.0, 1.0, 1.0, 1.0], [0.6, 1.6, 0.9, 1.5]), compile_time,
                       settings)
    assert wide.status == costs.UNDECIDED
    # A duet that measured nothing (a compile time at or below zero) does not count.
    one = costs.judge(_duets([1.0, -0.1], [1.0, 1.0]), compile_time, settings)
    assert (one.status, one.duets, one.ratio) == (costs.UNDECIDED, 1, None)
    assert one.describe() == ("compile time: undecided (fewer than two duets measured it on "
                              "both sides: A 1.00 s, B 1.00 s)")
    memory = costs.COSTS[2]
    # TensorFlow's CPU allocator keeps no statistics with TF_ENABLE_ONEDNN_OPTS=0: side A
    # reports no device memory, and the line says so.
    blind = costs.judge(_duets([None] * 4, [130 * 2**20] * 4, memory.key), memory, settings)  # type: ignore[list-item]
    assert blind.describe() == ("peak device memory: undecided (fewer than two duets "
                                "measured it on both sides: A none reported, B 130 MiB)")
    heavier = costs.judge(_duets([48 * 2**20] * 4, [348 * 2**20] * 4, memory.key), memory,
                          settings)
    assert heavier.status == costs.HIGHER and heavier.describe().startswith(
        "peak device memory: higher, B/A 7.250 [7.250, 7.250] (98.8% over 4 duets; A 48 MiB, "
        "B 348 MiB; floor 10%)")


def _case(suite: pytest.Pytester) -> dict[str, Any]:
    (found,) = (suite.path / ".perf-results" / "ab").glob("*.json")
    data: dict[str, Any] = json.loads(found.read_text())
    case: dict[str, Any] = data["cases"][0]
    return case


def test_an_a_a_session_says_no_cost_is_higher(make_suite: MakeSuite) -> None:
    suite = make_suite("tinycnn")
    result = suite.runpytest(*CASE, *AB)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    case = _case(suite)
    assert [d["duet"] for d in case["costs"]["duets"]] == [1, 2, 3, 4]
    for side in "AB":
        assert all(d[side]["time_to_first_step_s"] > 0 and d[side]["peak_rss_bytes"] > 0
                   for d in case["costs"]["duets"])
    verdicts = case["costs"]["verdicts"]
    assert set(verdicts) == {c.key for c in costs.COSTS}
    assert not any(v["status"] == costs.HIGHER for v in verdicts.values()), verdicts
    assert verdicts["peak_rss_bytes"]["status"] == costs.SAME, verdicts
    assert "peak host memory: same" in (suite.path / ".perf-results" / "reports" / "ab"
                                        / "ab.md").read_text()


def test_a_side_that_compiles_longer_and_holds_more_fails_costs_more(
        make_suite: MakeSuite) -> None:
    suite = make_suite("tinycnn")
    result = suite.runpytest(*CASE, *AB, "--perf-inject-cost=compile=2",
                             "--perf-inject-cost=memory=300")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    case = _case(suite)
    assert case["failure"]["cause"] == "costs_more"
    for said in ("compile time: higher", "peak device memory: higher",
                 "peak host memory: higher"):
        assert said in case["failure"]["message"]
    verdicts = case["costs"]["verdicts"]
    # 2 s of CPU more in each of B's first rounds, whatever the other workers did meanwhile.
    assert verdicts["compile_cpu_s"]["b_median"] == pytest.approx(
        verdicts["compile_cpu_s"]["a_median"] + 2, abs=0.5)
    # The allocator's peak grows by chunks: 48 MiB to 332 here, for 300 more held.
    assert verdicts["peak_memory_bytes"]["b_median"] \
        >= verdicts["peak_memory_bytes"]["a_median"] + 250 * 2**20
    result.stdout.fnmatch_lines(["*FAILED (costs_more)*",
                                 "*: costs_more: side B costs more than side A beyond the "
                                 "floor: compile time: higher, B/A *"])
    # A bisection step that ends so still follows speed: a costlier commit is not skipped.
    (found,) = (suite.path / ".perf-results" / "ab").glob("*.json")
    step = StepRunner(suite.path, suite.path / ".perf-results", suite.path / "logs",
                      Selection("", case["case_id"], ()), "b", lambda _: None)
    judged = step._read(found.stem, subprocess.CompletedProcess([], 1, "", ""), 1.0,
                        Path("step.log"))
    assert isinstance(judged, Judged) and judged.pairs >= 16, judged
