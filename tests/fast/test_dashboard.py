"""The dashboard's parts that need no browser: a case's band, what its pages say. Built by its
command and opened in headless Chromium: tests/real/test_dashboard.py."""

from __future__ import annotations

import random
import statistics
from pathlib import Path

import pytest

from tfperf.dashboard import site, site_data
from tfperf.dashboard.plots import _bands
from tfperf.gate.statistics import GateSettings
from tfperf.storage.results_store import BisectRow, FailureRow, ResultsStore, SessionRow
from tfperf.storage.timestamps import utc


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


def test_failures_show_their_log_tails_and_each_bisection_has_its_page_of_steps(
        tmp_path: Path) -> None:
    """Issue 54: a failure's last lines of log, kept by the store, are on its case's page (the
    path on the runner is not enough); a bisection is on the front page, with a page of its
    steps linking each to its A/B session. (Rendered in Chromium: tests/real/test_dashboard.py.)"""
    store = ResultsStore.open(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    case = "tinycnn-cpu1-workers1-xla_off-NHWC-default-single-fp32-synthetic-prep_host"
    try:
        row = SessionRow("s1", "measured", "smoke", "k", "", utc("2026-11-28T01:00:00+00:00"))
        store.add_failures(row, [FailureRow(case, utc("2026-11-28T01:05:00+00:00"), "crash",
                                            "building", "worker killed by SIGSEGV", "w.log",
                                            "Fatal Python error: Segmentation fault\n  in <build>")])
        steps = [{"role": "confirm", "candidate": 2, "against": 0, "verdict": "slower",
                  "ratio": 0.5, "low": 0.4, "high": 0.6, "confidence": 0.9875, "pairs": 16,
                  "seconds": 27.0, "session": "bisect-1-step01"},
                 {"role": "bisect", "candidate": 1, "against": 0, "verdict": "skipped",
                  "reason": "cannot be imported", "seconds": 6.0}]
        store.add_bisect(BisectRow("bisect-1", utc("2026-11-28T02:00:00+00:00"), "k", case,
                                   "commits", "found", "c2", "c0", {
                                       "candidates": [{"label": f"c{i}"} for i in range(3)],
                                       "steps": steps}))
        pages_written = site.build(site_data.read(store), tmp_path / "site", workers=1)
    finally:
        store.close()
    assert pages_written == 3  # the front page, the case's, the bisection's
    case_page = (tmp_path / "site" / "cases" / f"{case}.html").read_text()
    assert "<pre class=\"log\">Fatal Python error: Segmentation fault\n  in &lt;build&gt;</pre>" \
        in case_page
    front = (tmp_path / "site" / "index.html").read_text()
    assert "<h2>Bisections (1)</h2>" in front and 'href="bisects/bisect-1.html"' in front
    bisection = (tmp_path / "site" / "bisects" / "bisect-1.html").read_text()
    assert "<b>found</b>; culprit <code>c2</code>, last good <code>c0</code>" in bisection
    assert "<td>1 (confirm)</td><td><code>c2</code></td><td><code>c0</code></td><td>0.500</td>" \
        "<td>[0.400, 0.600] at 98.75%</td><td>slower</td><td>16</td>" in bisection
    assert '<a href="../ab/bisect-1-step01.html">' in bisection
    assert "<td>skipped: cannot be imported</td>" in bisection
