"""Every case of the matrix: train the workload for real, measure it, compare with its baseline.

The cases come from the matrix (tfperf.cases.matrix) through pytest_generate_tests; select them by any
axis value with -k, e.g. `-k "xla_jit and NCHW"`.
"""

from __future__ import annotations

import pytest

from tfperf.ab.case import ABRunner
from tfperf.cases.matrix import Case
from tfperf.measure.case_runner import CaseRunner


def test_training(perf_case: Case, perf_runner: CaseRunner | ABRunner,
                  request: pytest.FixtureRequest) -> None:
    if isinstance(perf_runner, ABRunner):
        # Both sides' rounds are timed by their workers and saved as pytest-benchmark JSON by
        # the A/B reports; the fixture, which times one callable, is not used.
        perf_runner.run(perf_case)
    else:
        perf_runner.run(perf_case, request.getfixturevalue("benchmark"))
