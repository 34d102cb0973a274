"""Every case of the matrix: train the workload for real, measure it, compare with its baseline.

The cases come from the matrix (tfperf.cases.matrix) through pytest_generate_tests; select them by any
axis value with -k, e.g. `-k "xla_jit and NCHW"`.
"""

from __future__ import annotations

import pytest

from tfperf.cases.matrix import Case
from tfperf.measure.runner_protocol import Runner


def test_training(perf_case: Case, perf_runner: Runner, request: pytest.FixtureRequest) -> None:
    perf_runner.run(perf_case, request)
