"""Numerics in A/B: both sides train from side A's initial weights on side A's batches and their
losses, first-step gradients and final weights compare within the precision's tolerance. Real
sessions: an A/A says `numerics same` with side B's start bit for bit side A's; side B's loss
scaled by 2 tolerances (--perf-inject-numerics) fails the case `numerics_differ`, naming the
step, the difference and the tolerance."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tfperf.ab import numerics_check
from tfperf.ground.failures import CaseFailure
from tfperf.numerics.compare import Trajectory
from tfperf.numerics.tolerances import MEASURED

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
