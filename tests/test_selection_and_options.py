"""Case ids, -k selection, skip reasons and option errors, through real pytest runs."""

from __future__ import annotations

import pytest

from tests.conftest import MakeSuite


def test_ids_carry_every_axis_and_k_selects_by_them(make_suite: MakeSuite) -> None:
    suite = make_suite("tinycnn")
    result = suite.runpytest("--collect-only", "-q", "-k", "xla_jit and NCHW")
    ids = [line for line in result.outlines if "::test_training[" in line]
    assert ids
    assert all("-xla_jit-" in line and "-NCHW-" in line for line in ids)
    assert any("tinycnn-cpu1-xla_jit-NCHW-default-single-fp32" in line for line in ids)
    everything = suite.runpytest("--collect-only", "-q")
    assert len([x for x in everything.outlines if "::test_training[" in x]) > len(ids)


def test_unrunnable_cases_are_skipped_with_the_reason(make_suite: MakeSuite) -> None:
    suite = make_suite("tinycnn")
    result = suite.runpytest("-rs", "--perf-only=device_kind=gpu")
    result.assert_outcomes(skipped=20)
    result.stdout.fnmatch_lines(["*SKIPPED*needs 1 GPU, found 0*", "*SKIPPED*needs 2 GPUs, found 0*"])
    cpu2 = suite.runpytest("-rs", "--perf-only=device_kind=cpu", "--perf-only=device_count=2")
    cpu2.stdout.fnmatch_lines(["*SKIPPED*needs 2 CPU devices, found 1*"])


def test_tier_markers_select_cases(make_suite: MakeSuite) -> None:
    suite = make_suite("tinycnn")
    result = suite.runpytest("--collect-only", "-q", "--perf-tier=nightly", "-m", "nightly")
    ids = [line for line in result.outlines if "::test_training[" in line]
    assert ids and all("xla_auto" in i or "-gpu4-" in i or "-cpu4-" in i or "mixed" in i
                       or "-gpu8-" in i or "-cpu8-" in i or "towers" in i for i in ids)


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("--perf-tier=fast", "ERROR: --perf-tier: unknown tier 'fast'; valid: smoke, nightly, full"),
        ("--perf-only=xla=fast", "ERROR: --perf-only: xla has no value 'fast'; valid: off, jit, auto"),
        ("--perf-only=colour=red", "ERROR: --perf-only: 'colour=red' is not AXIS=VALUE*"),
        ("--perf-rounds=-3", "ERROR: --perf-rounds: '-3' is not a whole number of at least 1"),
        ("--perf-threshold=abc", "ERROR: --perf-threshold: 'abc' is not a number greater than 0"),
        ("--perf-only=workload=resnet99", "ERROR: --perf-only: workload has no value 'resnet99'; "
                                          "valid: tinycnn"),
    ],
)
def test_bad_option_is_one_line_before_any_case(make_suite: MakeSuite, option: str,
                                                message: str) -> None:
    suite = make_suite("tinycnn")
    result = suite.runpytest(option)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    # TensorFlow's own start-up chatter may precede ours; our error is one line.
    errors = [line for line in result.errlines if line.startswith("ERROR")]
    assert len(errors) == 1, result.errlines
    result.stderr.fnmatch_lines([message])
    assert "test_training" not in result.stdout.str()
