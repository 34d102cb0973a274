"""The yardsticks MFU and bandwidth are rated against: real bursts, and the pairing of each
measured round with the burst beside it."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

import pytest
import tensorflow as tf

from tests.helpers.suites import MakeSuite
from tfperf.measure import sanity
from tfperf.measure.figures import beside_rounds, paired_fraction
from tfperf.worker.telemetry import yardsticks


def test_matmul_and_copy_yardsticks_time_real_bursts() -> None:
    flops = yardsticks.matmul("/device:CPU:0", tf.float32)
    assert flops.work == 2 * 2048**3
    copies = yardsticks.copy("/device:CPU:0")
    assert copies.work == 2 * (64 << 20) * 4
    # Loose bounds: a 2-core CPU does well over 1 GFLOP/s and 100 MB/s, and no CPU 100 TFLOP/s.
    assert 1e9 < flops.rate()[0] < 1e14
    assert 1e8 < copies.rate()[0] < 1e13


def test_a_burst_that_shares_its_cores_with_other_processes_says_so() -> None:
    flops = yardsticks.matmul("/device:CPU:0", tf.float32)
    _, share = flops.rate()
    # Alone, the process's threads had about all the cores' time (the machine may be busy
    # with something else, so only a sane range is asserted).
    assert share is not None and 0.0 < share < 1.5
    # A busy loop on every core, each in a session of its own as an unrelated job: the
    # process gets half the cores' time or less (a third per core with 2 loops and the
    # burst's 2 threads, under per-session fair scheduling), whatever else runs.
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"],
                              start_new_session=True)
             for _ in range(len(os.sched_getaffinity(0)))]
    try:
        time.sleep(0.2)  # the loops running before the burst starts
        shares = [flops.rate()[1] for _ in range(3)]
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
    assert all(s is not None and s < sanity.CPU_SHARE_MIN for s in shares), shares


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


def test_a_session_that_bursts_every_third_round_rates_the_rounds_between_by_the_last(
        make_suite: MakeSuite) -> None:
    suite = make_suite("tinycnn")
    result = suite.runpytest("-k", "tinycnn and cpu1 and workers1 and xla_off and NHWC and single "
                             "and synthetic and prep_host and default and fp32", "--perf-rounds=4",
                             "--perf-yardstick-every=3", "--benchmark-json=out.json")
    assert result.parseoutcomes().get("no_baseline") == 1, result.stdout.str()
    (bench,) = json.loads((suite.path / "out.json").read_text())["benchmarks"]
    info = bench["extra_info"]
    assert info["yardstick_every"] == 3
    # Timed before rounds 1 and 4 and after the last; rounds 2 and 3 stand on the first.
    bursts = info["peak_flops_per_device_by_round"]
    assert len(bursts) == 5 and bursts[0] == bursts[1] == bursts[2], bursts
    assert len(info["yardstick_cpu_share_by_round"]) == 3
    flops_per_round = info["flops_per_example"] * info["batch_size"] * info["steps_per_round"]
    assert info["mfu"] == pytest.approx(statistics.median(
        flops_per_round / s / max(bursts[n], bursts[n + 1])
        for n, s in enumerate(info["worker_round_s"])))
