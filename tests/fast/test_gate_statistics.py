"""The gate's statistics on known data: what is flagged, what is noise, what is confirmed."""

from __future__ import annotations

import numpy as np
import pytest

from tfperf.gate import statistics
from tfperf.gate.statistics import THROUGHPUT, GateSettings, Metric

SETTINGS = GateSettings()
MEMORY = Metric("peak_memory_bytes", "peak memory", False)


def steady(n: int, sigma: float, seed: int = 0, centre: float = 1000.0) -> list[float]:
    return list(centre * (1 + np.random.default_rng(seed).normal(0, sigma, n)))


def test_a_significant_slowdown_beyond_the_floor_is_flagged() -> None:
    verdict = statistics.judge(THROUGHPUT, 900.0, steady(25, 0.01), SETTINGS, SETTINGS.floor)
    assert verdict.status == statistics.FLAGGED
    assert verdict.z is not None and verdict.z > SETTINGS.z
    assert verdict.method == "robust z, 25 runs"
    assert verdict.change == pytest.approx(-0.1, abs=0.01)


def test_significant_but_below_the_effect_floor_passes() -> None:
    verdict = statistics.judge(THROUGHPUT, 970.0, steady(25, 0.002), SETTINGS, SETTINGS.floor)
    assert verdict.z is not None and verdict.z > 10
    assert verdict.status == statistics.OK


def test_beyond_the_floor_but_within_the_noise_passes() -> None:
    verdict = statistics.judge(THROUGHPUT, 920.0, steady(25, 0.05), SETTINGS, SETTINGS.floor)
    assert verdict.z is not None and verdict.z < SETTINGS.z
    assert verdict.status == statistics.OK


def test_a_per_case_floor_overrides_the_default() -> None:
    history = steady(25, 0.002)
    assert statistics.judge(THROUGHPUT, 930.0, history, SETTINGS, 0.05).status == statistics.FLAGGED
    assert statistics.judge(THROUGHPUT, 930.0, history, SETTINGS, 0.10).status == statistics.OK


def test_an_improvement_beyond_the_noise_says_the_baseline_is_stale() -> None:
    verdict = statistics.judge(THROUGHPUT, 1150.0, steady(25, 0.01), SETTINGS, SETTINGS.floor)
    assert verdict.status == statistics.FASTER == "faster: baseline stale"


def test_larger_peak_memory_is_the_slowdown_of_memory() -> None:
    history = steady(25, 0.001, centre=1e9)
    assert statistics.judge(MEMORY, 1.2e9, history, SETTINGS, SETTINGS.floor).status == statistics.FLAGGED
    assert statistics.judge(MEMORY, 0.8e9, history, SETTINGS, SETTINGS.floor).status == statistics.FASTER


def test_identical_history_does_not_make_every_difference_significant() -> None:
    history = [1000.0] * 20
    assert statistics.judge(THROUGHPUT, 999.0, history, SETTINGS, SETTINGS.floor).status == statistics.OK
    assert statistics.judge(THROUGHPUT, 900.0, history, SETTINGS, SETTINGS.floor).status == statistics.FLAGGED


def test_short_history_uses_a_spread_threshold_never_tighter_than_the_floor() -> None:
    # Four runs with 1% spread: 4 sigma is 4%, so the 5% floor rules.
    quiet = statistics.judge(THROUGHPUT, 940.0, steady(4, 0.01), SETTINGS, SETTINGS.floor)
    assert quiet.method.endswith("4 runs") and quiet.threshold == pytest.approx(0.05)
    assert quiet.status == statistics.FLAGGED
    # Four runs spread by 3.7% (robust sigma): the threshold widens to 4 x 3.7%.
    noisy = statistics.judge(THROUGHPUT, 900.0, [1000.0, 950.0, 1050.0, 1000.0], SETTINGS,
                       SETTINGS.floor)
    assert noisy.threshold == pytest.approx(4 * 1.4826 * 25 / 1000)
    assert noisy.status == statistics.OK


def test_one_run_of_history_falls_back_on_the_spread_of_its_rounds() -> None:
    rounds = [[1000.0, 1100.0, 900.0, 1050.0, 950.0]]
    within = statistics.within_run_spread(rounds)
    assert within == pytest.approx(0.074, abs=0.001)
    verdict = statistics.judge(THROUGHPUT, 750.0, [1000.0], SETTINGS, SETTINGS.floor, within)
    assert verdict.threshold == pytest.approx(4 * within)
    assert verdict.status == statistics.OK  # -25% is within 4 sigma of these rounds
    assert statistics.judge(THROUGHPUT, 600.0, [1000.0], SETTINGS, SETTINGS.floor,
                      within).status == statistics.FLAGGED


def test_a_kept_spread_widens_the_threshold_after_a_marked_change() -> None:
    fresh = statistics.judge(THROUGHPUT, 880.0, [1000.0, 1001.0], SETTINGS, SETTINGS.floor)
    kept = statistics.judge(THROUGHPUT, 880.0, [1000.0, 1001.0], SETTINGS, SETTINGS.floor,
                      kept_spread=0.04)
    assert (fresh.status, kept.status) == (statistics.FLAGGED, statistics.OK)


def test_confirmation_needs_slower_rounds_and_the_same_effect() -> None:
    history = steady(25, 0.01)
    flagged = statistics.judge(THROUGHPUT, 880.0, history, SETTINGS, SETTINGS.floor)
    stored = steady(100, 0.02, seed=1)
    slower = steady(5, 0.02, seed=2, centre=880.0)
    confirmed = statistics.confirm(flagged, float(np.median(slower)), slower, stored, SETTINGS)
    assert confirmed.status == statistics.REGRESSION
    assert confirmed.p_value is not None and confirmed.p_value < SETTINGS.alpha
    same = steady(5, 0.02, seed=3)
    refuted = statistics.confirm(flagged, float(np.median(same)), same, stored, SETTINGS)
    assert refuted.status == statistics.NOT_CONFIRMED
    assert refuted.p_value is not None and refuted.p_value > SETTINGS.alpha
