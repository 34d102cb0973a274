"""Numerics in A/B: both sides train from side A's initial weights on side A's batches and their
losses, first-step gradients and final weights compare within the precision's tolerance. Real
sessions: an A/A says `numerics same` with side B's start bit for bit side A's; side B's loss
scaled by 2 tolerances (--perf-inject-numerics) fails the case `numerics_differ`, naming the
step, the difference and the tolerance."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers.ab_sessions import SessionRun, session_file
from tests.helpers.suites import MakeSuite
from tfperf.numerics.tolerances import MEASURED

CASE = ("-k", "tinycnn and cpu1 and workers1 and xla_off and NHWC and default and single and "
        "fp32 and synthetic and prep_host")
AB = ("--perf-ab-side-a=current", "--perf-ab-floor=20", "--perf-ab-pairs=8:8",
      "--perf-ab-duets=2", "--perf-ab-yardstick-every=4")  # bursts: no verdict uses them
TINYCNN = MEASURED[("tinycnn", "fp32")]


def _case(folder: Path) -> dict[str, Any]:
    data = session_file(folder)
    assert data["settings"]["numerics"] is True
    case: dict[str, Any] = data["cases"][0]
    return case


@pytest.mark.long
def test_an_a_a_session_says_numerics_same_from_one_start(a_a_session: SessionRun) -> None:
    assert a_a_session.ret == pytest.ExitCode.OK, a_a_session.output
    numerics = _case(a_a_session.path)["numerics"]
    # One TensorFlow, one start, one set of batches: the same numbers to the bit.
    assert numerics["status"] == "same" and numerics["steps"] == 4, numerics
    assert (numerics["loss"], numerics["gradients"], numerics["weights"]) == (0, 0, 0)
    assert numerics["tolerance"]["loss"] == TINYCNN.loss
    markdown = (a_a_session.path / ".perf-results" / "reports" / "ab" / "ab.md").read_text()
    assert "numerics same (4 steps of batch 8 from side A's weights and batches" in markdown
    a_a_session.stdout.fnmatch_lines(["*verdict*numerics*pairs*", "*tinycnn-cpu1-* same *"])


def test_a_side_that_trains_to_other_numbers_fails_numerics_differ(
        make_suite: MakeSuite, tmp_path: Path) -> None:
    suite = make_suite("tinycnn")
    result = suite.runpytest(*CASE, *AB, "--perf-inject-numerics=2",
                             "--perf-profile-regressions=off")  # where: test_ab.py's slowdown
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    case = _case(suite.path)
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
