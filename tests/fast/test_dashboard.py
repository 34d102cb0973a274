"""The dashboard, built by its command from a generated store and opened in a real headless
Chromium (Debian's, driven by Playwright): it loads offline with no console error, and every
plot renders."""

from __future__ import annotations

import random
import statistics

import pytest

from tfperf.dashboard.plots import _bands
from tfperf.gate.statistics import GateSettings


def test_a_case_s_band_is_the_one_the_gate_would_not_flag() -> None:
    """Each run's band: the median of the previous runs (at most the gate's history), widened
    by z robust sigmas or the effect floor, whichever is wider; as the gate's statistics."""
    rng = random.Random(5)
    values = [1000 * rng.gauss(1, 0.01) for _ in range(80)] + [900.0]
    settings = GateSettings()
    low, high = _bands(values, settings)
    for i in (0, 1, 9, 30, 31, 80):
        window = values[max(0, i - settings.history_limit):i] or values[:1]
        centre = statistics.median(window)
        sigma = 1.4826 * statistics.median(abs(v - centre) for v in window)
        half = max(settings.z * sigma, settings.floor * centre)
        assert low[i] == pytest.approx(centre - half) and high[i] == pytest.approx(centre + half)
    assert values[-1] < low[-1]  # a 10% slowdown leaves the band (the floor is 5%)
    assert all(lo < v < hi for lo, v, hi in zip(low[31:80], values[31:80], high[31:80],
                                                strict=True))
