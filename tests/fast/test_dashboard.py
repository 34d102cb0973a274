"""The dashboard's parts that need no browser: a case's band, what its pages say. Built by its
command and opened in headless Chromium: tests/real/test_dashboard.py."""

from __future__ import annotations

import datetime
import random
import statistics
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from tests.fast import test_where
from tfperf.dashboard import site, site_data
from tfperf.dashboard.plots import SHOWN, _bands, _lines
from tfperf.gate.statistics import GateSettings
from tfperf.storage.results_store import ABCaseRow, BisectRow, FailureRow, ResultsStore, SessionRow
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


def test_a_machine_s_line_has_a_gap_where_a_run_lacks_the_figure_and_each_build_its_band(
        ) -> None:
    """A case page's machines each have one source for all its figures (fewer Bokeh models):
    a run without a figure (no peak memory read) is NaN there, a gap, and each TensorFlow
    build's band is the gate's over that build's runs that have the figure, as if the others
    were not there."""
    start = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    memory = [2e9 + 1e7 * (i % 5) if i != 7 else None for i in range(40)]
    points = [site_data.Point(start + datetime.timedelta(days=i), "m", 100.0 + i % 3,
                              "2.21.0" if i < 25 else "2.22.0", "h", "ok", f"s{i}",
                              peak_memory_bytes=memory[i]) for i in range(40)] + [
        site_data.Point(start, "other", 50.0, "2.21.0", "h", "ok", "o")]
    lines = _lines(points, SHOWN[:3])
    assert set(lines) == {"m", "other"}
    columns = lines["m"].data
    scale = SHOWN[2].scale
    value, low = columns["value_peak_memory_bytes"], columns["low_peak_memory_bytes"]
    assert np.isnan(value[7]) and np.isnan(low[7]) and np.isnan(columns["high_peak_memory_bytes"][7])
    have = [m * scale for m in memory[:25] if m is not None]
    assert list(low[:7]) + list(low[8:25]) == _bands(have, GateSettings(), SHOWN[2].floor)[0]
    later = [m * scale for m in memory[25:] if m is not None]
    assert list(low[25:]) == _bands(later, GateSettings(), SHOWN[2].floor)[0]
    assert list(columns["value_examples_per_sec"]) == [p.examples_per_sec for p in points[:40]]
    assert np.isnan(columns["value_compile_cpu_s"]).all()


def test_failures_show_their_log_tails_and_each_bisection_has_its_page_of_steps(
        tmp_path: Path) -> None:
    """A failure's last lines of log, kept by the store, are on its case's page (the
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
    # The front page, the case's, the bisection's, the findings' and the comparison's.
    assert pages_written == 5
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


def _measured(store: ResultsStore, session: str, day: int, rates: dict[str, tuple[float, str]]
              ) -> None:
    row = SessionRow(session, "measured", "nightly", "m1", "", utc(f"2026-11-{day:02d}T02:00"))
    store.add_runs(row, [{"case_id": case, "when": row.started.isoformat(),
                          "examples_per_sec": rate, "verdict": verdict,
                          "reason": "throughput -13.0%" if verdict == "regression" else ""}
                         for case, (rate, verdict) in rates.items()])


def test_findings_have_a_page_with_their_history_and_a_feed_and_pages_link_each_other(
        tmp_path: Path) -> None:
    """The regressions page (every finding, open ones first, with the examples/s
    before and during), its Atom feed with absolute links under the site's address, any two
    sessions' data for compare.html, and the links between cases, runs, A/B sessions and
    bisections. (Rendered in Chromium: tests/real/test_dashboard.py.)"""
    store = ResultsStore.open(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    try:
        _measured(store, "n1", 1, {"c": (1000.0, "ok"), "d": (1000.0, "ok")})
        _measured(store, "n2", 2, {"c": (870.0, "regression"), "d": (1100.0, "ok")})
        _measured(store, "n3", 3, {"c": (880.0, "regression")})
        ab = SessionRow("ab1", "ab", "nightly", "m1", "", utc("2026-11-03T05:00"),
                        differences=[{"kind": "package", "name": "keras", "A": "3.15.1",
                                      "B": "3.16.0.dev2026102704"}])
        found = {"where": {"A": test_where.A, "B": test_where.B}}  # a finding's where-report
        store.add_ab_cases(ab, [ABCaseRow("c", ab.started, "slower", 0.9, 0.88, 0.92, 64, found),
                                ABCaseRow("e", ab.started, "same", 1.0, 0.98, 1.02, 64, {})])
        store.add_bisect(BisectRow("b1", utc("2026-11-04T02:00"), "m1", "c", "tensorflow",
                                   "found", "tf==2.22.0", "tf==2.21.0", {"steps": []}))
        site.build(site_data.read(store), tmp_path / "site", workers=1,
                   base_url="https://octo.github.io/perf/")
    finally:
        store.close()
    built = tmp_path / "site"
    regressions = (built / "regressions.html").read_text()
    assert "3 findings, 1 still open." in regressions
    rows = regressions.split("<tr>")[2:]
    assert '<a href="cases/c.html"><code>c</code></a>' in rows[0] and "open" in rows[0]
    assert '1000.0 → 880.0 (<span class="bad">-12.0%</span>)' in rows[0]
    assert '<a href="bisects/b1.html">' in rows[1] and '<a href="ab/ab1.html">' in rows[2]
    feed = ET.fromstring((built / "regressions.xml").read_text())
    atom = "{http://www.w3.org/2005/Atom}"
    entries = feed.findall(f"{atom}entry")
    assert [e.find(f"{atom}category").get("term") for e in entries] == [  # type: ignore[union-attr]
        "culprit", "ab-slower", "regression"]
    assert [e.find(f"{atom}link").get("href") for e in entries] == [  # type: ignore[union-attr]
        "https://octo.github.io/perf/bisects/b1.html", "https://octo.github.io/perf/ab/ab1.html",
        "https://octo.github.io/perf/cases/c.html"]
    assert all(e.findtext(f"{atom}id", "").startswith("urn:uuid:") for e in entries)
    assert feed.findtext(f"{atom}updated") == "2026-11-04T02:00:00Z"
    assert (built / "sessions" / "n2.js").read_text() == \
        'tfperfSession("n2", {"c": 870.0, "d": 1100.0});\n'
    listed = (built / "static" / "sessions.js").read_text()
    assert listed.index('"id": "n3"') < listed.index('"id": "n2"') < listed.index('"id": "n1"')
    case = (built / "cases" / "c.html").read_text()
    assert '<a href="../compare.html#a=n1&amp;b=n2">n2</a>' in case
    assert '<a href="../compare.html#b=n1">n1</a>' in case  # the machine's first session
    assert "<h2>Findings</h2>" in case and '<a href="../ab/ab1.html">ab1</a>' in case
    assert '<a href="../bisects/b1.html">b1</a>' in case
    ab_page = (built / "ab" / "ab1.html").read_text()
    assert '<a href="../cases/c.html"><code>c</code></a>' in ab_page
    assert "<td><code>e</code></td>" in ab_page  # no page of its own: not a link
    assert "<h2>What differs between the sides (1)</h2>" in ab_page
    assert "<td><code>keras</code></td><td>3.15.1</td><td>3.16.0.dev2026102704</td>" in ab_page
    assert ab_page.count("<h2>Where in the step: ") == 1  # c's, a finding; e has none
    assert "<h2>Where in the step: <code>c</code></h2><p>One profiled round a side" in ab_page
    assert ('<tr><td><code>Sort</code></td><td class="n">0.000</td><td class="n">6.000</td>'
            '<td class="n">new</td>') in ab_page
    assert "<code>sort/TopKV2</code> 0.0 -&gt; 3.0 MiB" in ab_page
    front = (built / "index.html").read_text()
    assert 'type="application/atom+xml"' in front and "1 open" in front


def test_a_machine_keeps_its_colour_in_every_figure_whichever_figures_its_runs_lack() -> None:
    """The runs' dots are one source for all a case's figures, coloured by machine: each
    figure's lines and bands take the same colours, though machine "a" has no peak memory."""
    from tfperf.dashboard.plots import case_trends

    start = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    points = [site_data.Point(start + datetime.timedelta(days=i), machine, 100.0, "2.21.0",
                              "h", "ok", f"{machine}{i}",
                              peak_memory_bytes=None if machine == "a" else 2e9)
              for i in range(5) for machine in ("a", "b")]
    plots = case_trends("case", points, []).children
    colours = [{item.label["value"]: item.renderers[1].glyph.line_color
                for item in plot.legend[0].items} for plot in plots]
    assert len(colours) == 2 and colours[1] == {"b": colours[0]["b"]} != {"b": colours[0]["a"]}
    dots = plots[0].renderers[-1].data_source.data
    assert {m: c for m, c in zip(dots["machine"], dots["colour"], strict=True)} == colours[0]
