"""XLA equivalence: the property passes on agreeing arms and can be shown to fail."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from tests.helpers.suites import TEST_WORKLOADS, MakeSuite, worker_processes
from tfperf.equivalence.arms import ArmWorkers
from tfperf.numerics.compare import ArmSpec
from tfperf.storage import database
from tfperf.storage.results_store import ResultsStore

PROPERTY = "perf/test_xla_equivalence.py"


def example(**overrides: object) -> str:
    spec = {"workload": "tinycnn", "size": "tiny", "batch_size": 8, "data_format": "NHWC",
            "precision": "fp32", "seed": 3, "steps": 2, "xla": "jit",
            "device": "/device:CPU:0", "permute": False, "fault": None}
    spec.update(overrides)
    return json.dumps(spec)


def test_agreeing_arms_pass_and_the_largest_difference_is_reported(make_suite: MakeSuite
                                                                    ) -> None:
    """With no --hypothesis-profile, the smoke tier's property runs the `ci` profile: 3
    derandomized examples, no deadline."""
    suite = make_suite("tinycnn", perf_files=("test_xla_equivalence.py",))
    result = suite.runpytest(PROPERTY, "--hypothesis-show-statistics")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*tfperf: XLA equivalence*", "3 examples; largest XLA vs *",
                                 "*fp32 gradients*"])
    assert worker_processes() == []


def test_scaled_gradient_fails_shrinks_and_prints_a_command_that_reproduces_it(
        make_suite: MakeSuite) -> None:
    suite = make_suite("tinycnn", perf_files=("test_xla_equivalence.py",))
    # Narrowed with --perf-only so that shrinking (a real training run per step) stays short.
    result = suite.runpytest(PROPERTY, "--hypothesis-profile=tfperf-ci", "--perf-xla-fault=scale_gradient",
                             "--perf-only=xla=jit", "--perf-only=precision=fp32",
                             "--perf-only=data_format=NHWC")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*XLA (*) and non-XLA training differ for tinycnn *",
        "*first-step gradients differ by * (norm-wise relative*); tolerance *",
        "*reproduce: pytest perf/test_xla_equivalence.py --perf-xla-example=*",
    ])
    # Shrunk to the simplest configuration: smallest batch, one step, the first seed.
    command = re.search(r"reproduce: (pytest .*--perf-xla-fault=scale_gradient)$",
                        result.stdout.str(), re.MULTILINE)
    assert command is not None
    args = shlex.split(command.group(1))[1:]
    shrunk = json.loads(next(a for a in args if a.startswith("--perf-xla-example="))
                        .partition("=")[2])
    assert (shrunk["batch_size"], shrunk["steps"], shrunk["seed"]) == (4, 1, 0)
    again = suite.runpytest(*args)
    again.assert_outcomes(failed=1)
    again.stdout.fnmatch_lines(["*first-step gradients differ by *"])
    assert worker_processes() == []


@pytest.mark.parametrize(("fault", "expected"), [
    ("drop_term", "*first-step gradients differ by *"),
    ("epsilon", "*differ* by *; tolerance *"),
    ("nan", "*XLA arm loss is nan at step 1*"),
])
def test_each_fault_in_the_xla_arm_fails_the_example(make_suite: MakeSuite, fault: str,
                                                      expected: str) -> None:
    suite = make_suite("tinycnn", perf_files=("test_xla_equivalence.py",))
    result = suite.runpytest(PROPERTY, f"--perf-xla-example={example()}",
                             f"--perf-xla-fault={fault}")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([expected])


def test_an_arm_where_xla_did_not_run_fails(make_suite: MakeSuite) -> None:
    suite = make_suite("tinycnn", perf_files=("test_xla_equivalence.py",))
    result = suite.runpytest(PROPERTY, f"--perf-xla-example={example(xla='off')}")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*XLA did not run in the xla_off arm*"])
    # Kept as every failed case is: in the session's file, and in its store.
    (kept,) = (suite.path / ".perf-results" / "history" / "results").glob("*.json")
    (failure,) = json.loads(kept.read_text())["failures"]
    assert failure["case_id"].startswith("test_xla_training_matches_non_xla"), failure
    assert failure["cause"] == "error" and "EquivalenceFailure: XLA (off) and non-XLA training " \
        "differ" in failure["message"] and "XLA did not run" in failure["log_tail"], failure
    store = ResultsStore.open(database.default_url(suite.path / ".perf-results" / "history"))
    try:
        assert [f.case_id for f in store.failures()] == [failure["case_id"]]
    finally:
        store.close()


def test_bad_fault_name_is_one_line_listing_the_valid_ones(make_suite: MakeSuite) -> None:
    suite = make_suite("tinycnn", perf_files=("test_xla_equivalence.py",))
    result = suite.runpytest(PROPERTY, "--perf-xla-fault=typo")
    result.stderr.fnmatch_lines(["ERROR: --perf-xla-fault: no fault 'typo'; valid: "
                                 "scale_gradient, drop_term, epsilon, nan"])


def test_choices_that_exclude_xla_skip_the_property_with_the_reason(make_suite: MakeSuite
                                                                      ) -> None:
    # `pytest perf/ --perf-only=xla=off` runs the chosen cases; the property cannot draw an
    # XLA arm, so it is skipped as an excluded case is, before any worker starts.
    suite = make_suite("tinycnn", perf_files=("test_xla_equivalence.py",))
    result = suite.runpytest("-rs", PROPERTY, "--perf-only=xla=off")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*SKIPPED*--perf-only leaves no XLA equivalence example*"])


def test_arms_that_train_at_once_from_different_weights_are_trained_again_from_the_same(
        make_suite: MakeSuite) -> None:
    # On CPU the reference and the XLA arm train at once, each from the workload's seeded
    # initialisation. This workload's initialisation is not seeded: the XLA arm must train
    # again from the reference's weights, or the arms would differ for a reason XLA is not.
    suite = make_suite("unseeded_init", perf_files=("test_xla_equivalence.py",))
    result = suite.runpytest(PROPERTY, f"--perf-xla-example={example(workload='unseeded_init')}")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["1 examples (1 XLA arm trained again from the reference's "
                                 "initial weights); largest XLA vs non-XLA difference seen:"])
    assert worker_processes() == []


def test_an_xla_arm_compiles_its_forward_and_gradient_once(tmp_path: Path) -> None:
    # Its first-step gradients come from the executable its steps train with: no second
    # compilation of the same function for them.
    runner = ArmWorkers(tmp_path, tmp_path, timeout_s=300, gpu=False)
    try:
        result = runner.run(ArmSpec(**json.loads(example(steps=2))), TEST_WORKLOADS / "tinycnn.py")
    finally:
        runner.close()
    assert (result.xla_executions, result.xla_compilations) == (3, 1)  # gradients, 2 steps
