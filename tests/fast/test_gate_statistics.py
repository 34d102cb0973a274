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
    assert verdict.method == "robust z beyond 4 and the floor 5.0%, 25 runs"
    assert verdict.change == pytest.approx(-0.1, abs=0.01)


def test_significant_but_below_the_effect_floor_passes() -> None:
    verdict = statistics.judge(THROUGHPUT, 970.0, steady(25, 0.002), SETTINGS, SETTINGS.floor)
    assert verdict.z is not None and verdict.z > 10
    assert verdict.status == statistics.OK


def test_a_series_too_noisy_for_its_floor_is_unstable_and_says_what_it_would_take() -> None:
    # Runs spread 5% a run: z 4 could hold 20%, not the 5% floor (a change beyond the floor but
    # within the noise: what a settled figure can no longer be). Not gated: -15% passes...
    noisy = steady(25, 0.05)
    verdict = statistics.judge(THROUGHPUT, 850.0, noisy, SETTINGS, SETTINGS.floor)
    assert verdict.status == statistics.UNSTABLE == "unstable"
    spread = statistics.relative_sigma(noisy)
    assert verdict.described().endswith(
        f"unstable: its runs spread {spread:.1%} (robust, 25 runs), so z 4 holds "
        f"{4 * spread:.1%}, not its floor 5.0%; gated again once they spread at most 1.2%, or "
        f"with a floor of {4 * spread:.0%} in baselines/gate.toml; meanwhile only a change of 2x "
        "fails)")
    # ... but a gross change still fails, and a floor that the spread can hold gates it again.
    assert statistics.judge(THROUGHPUT, 450.0, noisy, SETTINGS, SETTINGS.floor).status == \
        statistics.FLAGGED
    assert statistics.judge(THROUGHPUT, 850.0, noisy, SETTINGS, 0.25).status == statistics.OK
    # A short history is unstable on its runs' own spread (6 runs, 3.7%), not on its rounds'.
    short = [1000.0, 950.0, 1050.0, 1000.0, 950.0, 1050.0]
    assert statistics.judge(THROUGHPUT, 900.0, short, SETTINGS, SETTINGS.floor).status == \
        statistics.UNSTABLE


def test_a_per_case_floor_overrides_the_default() -> None:
    history = steady(25, 0.002)
    assert statistics.judge(THROUGHPUT, 930.0, history, SETTINGS, 0.05).status == statistics.FLAGGED
    assert statistics.judge(THROUGHPUT, 930.0, history, SETTINGS, 0.10).status == statistics.OK


def test_an_improvement_beyond_the_noise_says_the_baseline_is_stale() -> None:
    verdict = statistics.judge(THROUGHPUT, 1150.0, steady(25, 0.01), SETTINGS, SETTINGS.floor)
    assert verdict.status == statistics.FASTER == "faster"
    assert verdict.described().endswith(": baseline stale")  # the reason, apart


def test_larger_peak_memory_is_the_slowdown_of_memory() -> None:
    history = steady(25, 0.001, centre=1e9)
    assert statistics.judge(MEMORY, 1.2e9, history, SETTINGS, SETTINGS.floor).status == statistics.FLAGGED
    assert statistics.judge(MEMORY, 0.8e9, history, SETTINGS, SETTINGS.floor).status == statistics.FASTER


def test_identical_history_does_not_make_every_difference_significant() -> None:
    history = [1000.0] * 20
    assert statistics.judge(THROUGHPUT, 999.0, history, SETTINGS, SETTINGS.floor).status == statistics.OK
    assert statistics.judge(THROUGHPUT, 900.0, history, SETTINGS, SETTINGS.floor).status == statistics.FLAGGED


def test_a_short_history_uses_a_spread_threshold_never_tighter_than_the_floor() -> None:
    # Six runs with 1% spread: 4 sigma is 4%, so the 5% floor rules.
    quiet = statistics.judge(THROUGHPUT, 940.0, steady(6, 0.01), SETTINGS, SETTINGS.floor)
    assert quiet.method.endswith("6 runs") and quiet.threshold == pytest.approx(0.05)
    assert quiet.status == statistics.FLAGGED
    # Six runs spread by 3.0% (robust sigma), a 15% floor: the threshold is the floor, 4 x 3.0%
    # within it.
    history = [1000.0, 980.0, 1020.0, 1000.0, 980.0, 1020.0]
    held = statistics.judge(THROUGHPUT, 860.0, history, SETTINGS, 0.15)
    assert held.threshold == pytest.approx(0.15) and held.status == statistics.OK


@pytest.mark.parametrize("runs", [1, 2, 4])
def test_a_history_too_short_to_know_its_noise_passes_all_but_a_gross_change(runs: int) -> None:
    history = [1000.0, 1001.0, 999.0, 1000.0][:runs]
    for now in (700.0, 510.0):  # -30%, -49%: noise or not, a short history cannot tell
        verdict = statistics.judge(THROUGHPUT, now, history, SETTINGS, SETTINGS.floor)
        assert verdict.status == statistics.BUILDING
        assert verdict.method.startswith(f"building history ({runs} of {SETTINGS.settle})")
    # Half the speed: a kernel fallback, whatever the history.
    gross = statistics.judge(THROUGHPUT, 490.0, history, SETTINGS, SETTINGS.floor)
    assert gross.status == statistics.FLAGGED and gross.threshold == pytest.approx(0.5)
    assert "only a change of 2x fails" in gross.described()


def test_a_compile_that_moves_by_less_than_its_absolute_floor_is_not_a_change() -> None:
    compile_time = next(m for m in statistics.METRICS if m.name == "compile_cpu_s")
    # The issue-52 night: 0.544 s, then 1.257 s (+131%) with one run of history.
    said = statistics.judge(compile_time, 1.257, [0.544], SETTINGS, 0.25)
    assert said.status == statistics.BUILDING
    # 3x and 1.5 s more: gross, however short the history.
    assert statistics.judge(compile_time, 5.5, [0.544], SETTINGS, 0.25).status == \
        statistics.FLAGGED
    # With enough history, +1 s on 0.5 s is +200%, beyond the relative floor, but below the
    # absolute one (1.5 s): the threshold is 300% there.
    history = [0.50, 0.52, 0.49, 0.51, 0.50, 0.50]
    small = statistics.judge(compile_time, 1.5, history, SETTINGS, 0.25)
    assert small.status == statistics.OK and small.threshold == pytest.approx(1.5 / 0.5)
    assert statistics.judge(compile_time, 2.1, history, SETTINGS, 0.25).status == \
        statistics.FLAGGED


def test_the_rounds_spread_widens_the_threshold_of_runs_that_agree() -> None:
    rounds = [[1000.0, 1100.0, 900.0, 1050.0, 950.0]]
    within = statistics.within_run_spread(rounds)
    assert within == pytest.approx(0.074, abs=0.001)
    history = [1000.0, 1000.5, 999.5, 1000.0, 1000.0]
    verdict = statistics.judge(THROUGHPUT, 750.0, history, SETTINGS, SETTINGS.floor, within)
    assert verdict.threshold == pytest.approx(4 * within)
    assert verdict.status == statistics.OK  # -25% is within 4 sigma of these rounds
    assert statistics.judge(THROUGHPUT, 600.0, history, SETTINGS, SETTINGS.floor,
                            within).status == statistics.FLAGGED


def test_a_kept_spread_widens_the_threshold_after_a_marked_change() -> None:
    history = [1000.0, 1001.0, 1000.0, 999.0, 1000.0]
    fresh = statistics.judge(THROUGHPUT, 880.0, history, SETTINGS, SETTINGS.floor)
    kept = statistics.judge(THROUGHPUT, 880.0, history, SETTINGS, SETTINGS.floor,
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
