"""The yardsticks MFU and bandwidth are rated against: real bursts, and the pairing of each
measured round with the burst beside it."""

from __future__ import annotations

import pytest
import tensorflow as tf

from tfperf.measure.figures import beside_rounds, paired_fraction
from tfperf.worker.telemetry import yardsticks


def test_matmul_and_copy_yardsticks_time_real_bursts() -> None:
    flops = yardsticks.matmul("/device:CPU:0", tf.float32)
    assert flops.work == 2 * 2048**3
    copies = yardsticks.copy("/device:CPU:0")
    assert copies.work == 2 * (64 << 20) * 4
    # Loose bounds: a 2-core CPU does well over 1 GFLOP/s and 100 MB/s, and no CPU 100 TFLOP/s.
    assert 1e9 < flops.rate() < 1e14
    assert 1e8 < copies.rate() < 1e13


def test_a_machine_slowing_down_mid_session_leaves_the_paired_fraction_unchanged() -> None:
    # A workload at 60% of the device, on a machine running at 200 units/s for three rounds
    # and at 140 for the next three: every round, and so the median, is 0.6.
    rates = [200.0] * 3 + [140.0] * 3
    round_s = [60.0 / (0.6 * rate) for rate in rates]
    assert paired_fraction(60.0, round_s, rates, 1) == pytest.approx(0.6)
    # Set against one session-wide rate (the first burst's), the same rounds read as 0.51.
    session_wide = sorted(60.0 / s / rates[0] for s in round_s)
    assert (session_wide[2] + session_wide[3]) / 2 == pytest.approx(0.51)


def test_the_fraction_is_per_device_and_a_median() -> None:
    assert paired_fraction(100.0, [1.0, 1.0, 10.0], [100.0, 100.0, 100.0], 2) \
        == pytest.approx(0.5)


def test_every_round_needs_its_own_burst() -> None:
    with pytest.raises(ValueError, match="3 rounds and 2 yardstick bursts"):
        paired_fraction(1.0, [1.0, 1.0, 1.0], [1.0, 1.0], 1)


def test_with_a_burst_on_each_side_a_round_is_rated_against_the_faster() -> None:
    # Bursts between three rounds; the second was hit by something else (it read a quarter).
    # Each round keeps an undisturbed neighbour: the fraction is 0.6 throughout.
    assert beside_rounds([1.0, 1.0, 1.0], [100.0, 25.0, 100.0, 100.0]) == [100.0] * 3
    assert paired_fraction(60.0, [1.0, 1.0, 1.0], [100.0, 25.0, 100.0, 100.0], 1) \
        == pytest.approx(0.6)
