"""The comparison itself: norm-wise errors over the whole model, tolerances, non-finite values."""

from __future__ import annotations

import numpy as np

from tfperf.numerics.compare import Trajectory, differences, problems
from tfperf.numerics.tolerances import MEASURED, tolerance


def trajectory(losses: list[float], weights: list[np.ndarray]) -> Trajectory:
    return Trajectory(np.asarray(losses), [f"v{i}" for i in range(len(weights))],
                      weights, weights, weights, (np.zeros((1, 2, 3)), np.zeros((1, 2))))


def test_errors_are_norm_wise_over_the_model_and_name_the_largest_contributor() -> None:
    reference = trajectory([2.0, 1.0], [np.ones(3), np.full(4, 1e-6)])
    # A near-zero variable off by 100% barely moves the model-wide error.
    candidate = trajectory([2.0, 1.001], [np.ones(3) * 1.01, np.full(4, 2e-6)])
    found = differences(reference, candidate)
    assert found.loss_step == 2 and abs(found.loss - 1e-3) < 1e-9
    assert abs(found.weights - 0.01) < 1e-6 and found.weights_at == "v0"


def test_problems_name_what_exceeds_the_tolerance_and_non_finite_always_fails() -> None:
    reference = trajectory([2.0], [np.ones(3)])
    fine = differences(reference, trajectory([2.0], [np.ones(3)]))
    assert problems(fine, tolerance("tinycnn", "fp32")) == []
    nan = differences(reference, trajectory([float("nan")], [np.ones(3)]))
    assert problems(nan, tolerance("tinycnn", "fp32")) == ["XLA arm loss is nan at step 1"]


def test_an_unmeasured_workload_gets_the_loosest_measured_tolerance_of_its_precision() -> None:
    loosest = max(t.gradients for (_, p), t in MEASURED.items() if p == "fp32")
    assert tolerance("not_measured", "fp32").gradients == loosest
