"""Numerics in A/B: both sides train from side A's initial weights on side A's batches and their
losses, first-step gradients and final weights compare within the precision's tolerance. Real
sessions: an A/A says `numerics same` with side B's start bit for bit side A's; side B's loss
scaled by 2 tolerances (--perf-inject-numerics) fails the case `numerics_differ`, naming the
step, the difference and the tolerance."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.conftest import MakeSuite
from tfperf.ab import numerics_check
from tfperf.ground.failures import CaseFailure
from tfperf.numerics.compare import Trajectory
from tfperf.numerics.tolerances import MEASURED

CASE = ("-k", "tinycnn and cpu1 and workers1 and xla_off and NHWC and default and single and "
        "fp32 and synthetic and prep_host")
AB = ("--perf-baseline=current", "--perf-ab-floor=20", "--perf-ab-pairs=8:8",
      "--perf-ab-duets=2")
TINYCNN = MEASURED[("tinycnn", "fp32")]


def _trajectory(losses: list[float], start: float = 1.0, batch: float = 0.0) -> Trajectory:
    weights = [np.full(3, start, np.float32)]
    return Trajectory(np.asarray(losses), ["dense/kernel"], weights, weights, weights,
                      (np.full((2, 4, 3), batch, np.float32), np.zeros((2, 4), np.int32)))


def test_the_verdict_names_the_step_and_the_tolerance_and_needs_an_identical_start() -> None:
    a = _trajectory([2.0, 1.5, 1.0])
    same = numerics_check.judge(a, _trajectory([2.0, 1.5, 1.0]), TINYCNN, 7)
    assert same.status == numerics_check.SAME and same.loss == 0.0
    assert same.describe().startswith("numerics same (3 steps of batch 8 from side A's "
                                      "weights and batches, seed 7): loss 0 (step 0)")
    off = numerics_check.judge(a, _trajectory([2.0, 1.5 * (1 + 2 * TINYCNN.loss), 1.0]),
                               TINYCNN, 7)
    assert off.status == numerics_check.DIFFER and off.loss_step == 2
    assert off.describe().endswith(f"loss differs by {2 * TINYCNN.loss:.3g} (relative) at step "
                                   f"2; tolerance {TINYCNN.loss:.3g}")
    for other in (_trajectory([2.0, 1.5, 1.0], start=1.0 + 1e-7),
                  _trajectory([2.0, 1.5, 1.0], batch=1e-30)):
        with pytest.raises(CaseFailure, match="did not start from exactly side A's") as failed:
            numerics_check.judge(a, other, TINYCNN, 7)
        assert failed.value.cause == "configuration"
    # Another Keras may name the variables otherwise: they pair by position, shapes checked.
    renamed = numerics_check.judge(a, replace(_trajectory([2.0, 1.5, 1.0]), names=["d/k"]),
                                   TINYCNN, 7)
    assert renamed.status == numerics_check.SAME
    other = replace(a, initial=[np.ones(4, np.float32)], names=["dense_1/kernel"])
    with pytest.raises(CaseFailure, match="the sides built different models: side A has 1 "
                       "variables, side B 1, first apart: dense/kernel vs dense_1/kernel"):
        numerics_check.judge(a, other, TINYCNN, 7)


def _case(suite: pytest.Pytester) -> dict[str, Any]:
    (found,) = (suite.path / ".perf-results" / "ab").glob("*.json")
    data: dict[str, Any] = json.loads(found.read_text())
    assert data["settings"]["numerics"] is True
    case: dict[str, Any] = data["cases"][0]
    return case


def test_an_a_a_session_says_numerics_same_from_one_start(make_suite: MakeSuite) -> None:
    suite = make_suite("tinycnn")
    result = suite.runpytest(*CASE, *AB)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    numerics = _case(suite)["numerics"]
    # One TensorFlow, one start, one set of batches: the same numbers to the bit.
    assert numerics["status"] == "same" and numerics["steps"] == 4, numerics
    assert (numerics["loss"], numerics["gradients"], numerics["weights"]) == (0, 0, 0)
    assert numerics["tolerance"]["loss"] == TINYCNN.loss
    markdown = (suite.path / ".perf-results" / "reports" / "ab" / "ab.md").read_text()
    assert "numerics same (4 steps of batch 8 from side A's weights and batches" in markdown
    result.stdout.fnmatch_lines(["*verdict*numerics*pairs*", "*tinycnn-cpu1-* same *"])


def test_a_side_that_trains_to_other_numbers_fails_numerics_differ(
        make_suite: MakeSuite, tmp_path: Path) -> None:
    suite = make_suite("tinycnn")
    result = suite.runpytest(*CASE, *AB, "--perf-inject-numerics=2")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    case = _case(suite)
    assert case["failure"]["cause"] == "numerics_differ"
    numerics = case["numerics"]
    # The first step's loss differs by twice the tolerance, up to float32's rounding of each
    # side's loss (2^-24 relative each, 6% of tinycnn's 2 tolerances: one seed read 1.976);
    # later steps compound the larger first update (one seed read 2.14 at step 2).
    assert numerics["status"] == "differ" and numerics["perturb"] == 2 * TINYCNN.loss
    assert 2 * TINYCNN.loss - 2 * 2**-24 <= numerics["loss"] < 4 * TINYCNN.loss
    markdown = (suite.path / ".perf-results" / "reports" / "ab" / "ab.md").read_text()
    assert "1 training to other numbers" in markdown and "numerics differ (4 steps" in markdown
    result.stdout.fnmatch_lines([
        "*FAILED (numerics_differ)*",
        f"*: numerics_differ: side B trains to other numbers than side A: loss differs by "
        f"* (relative) at step *; tolerance {TINYCNN.loss:.3g}*"])


def test_numerics_can_be_left_out_and_bad_values_get_one_line(make_suite: MakeSuite) -> None:
    suite = make_suite("tinycnn")
    result = suite.runpytest(*CASE, *AB, "--perf-ab-numerics=maybe")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--perf-ab-numerics: 'maybe' is not on or off"])
    result = suite.runpytest(*CASE, *AB, "--perf-inject-numerics=-1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--perf-inject-numerics: '-1' is not a number greater than 0"])
