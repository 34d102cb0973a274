"""The dashboard's pages written from the store's data: the front page, a page per case, one
per A/B session and one per bisection, in parallel processes (tfperf-dashboard,
tfperf/commands/tfperf_dashboard.py, builds it)."""

from __future__ import annotations

import datetime
import multiprocessing
import os
from pathlib import Path

from tfperf.dashboard import bisect_pages, pages, plots, site_data
from tfperf.dashboard.html_text import slug

NIGHT = datetime.timedelta(hours=24)


# What the page-writing processes read: forked after it is set, each has it without a copy.
_SITE: tuple[site_data.SiteData, Path] | None = None
# The newest A/B sessions have a plot as well as their table: a year of nightly sessions would
# otherwise double the build (each plot is a Bokeh document to serialise).
PLOTTED_AB_SESSIONS = 30


def _write_page(task: tuple[str, str, bool]) -> None:
    assert _SITE is not None
    data, site = _SITE
    kind, name, plotted = task
    if kind == "cases":
        points, failures = data.runs.get(name, []), data.failures.get(name, [])
        text = pages.case_page(name, points, failures, plots.case_trends(name, points, failures))
    else:
        cases = data.ab[name]
        text = pages.ab_page(name, cases, plots.ab_session(name, cases) if plotted else None)
    (site / kind / f"{slug(name)}.html").write_text(text, encoding="utf-8")


def build(data: site_data.SiteData, site: Path, workers: int | None = None) -> int:
    """Write the site under `site`, its pages in `workers` processes (default: one per CPU,
    up to 4: Bokeh's serialisation is the build's time); how many pages."""
    global _SITE
    pages.write_static(site)
    (site / "cases").mkdir(exist_ok=True)
    (site / "ab").mkdir(exist_ok=True)
    sessions = sorted(data.ab.items(), key=lambda item: item[1][0].when, reverse=True)
    tasks = [("cases", case, True) for case in data.cases] + [
        ("ab", name, i < PLOTTED_AB_SESSIONS) for i, (name, _) in enumerate(sessions)]
    _SITE = (data, site)
    count = workers or min(os.cpu_count() or 1, 4)
    if count > 1 and len(tasks) > 1:
        with multiprocessing.get_context("fork").Pool(count) as pool:
            pool.map(_write_page, tasks, chunksize=4)
    else:
        for task in tasks:
            _write_page(task)
    _SITE = None
    newest = data.newest
    since = newest - NIGHT if newest else None
    regressed = [(case, p) for case, points in data.runs.items() for p in points
                 if since and p.when > since and p.verdict == "regression"]
    failed = [(case, f) for case, fails in data.failures.items() for f in fails
              if since and f.when > since]
    latest = {case: points[-1] for case, points in data.runs.items()}
    (site / "bisects").mkdir(exist_ok=True)
    for bisect in data.bisects:  # a handful, no plots: written here
        (site / "bisects" / f"{slug(bisect.id)}.html").write_text(
            pages.page(f"Bisection {bisect.id}", bisect_pages.body(bisect), 1), encoding="utf-8")
    (site / "index.html").write_text(
        pages.front_page(data.cases, newest, sorted(regressed, key=lambda x: x[0]),
                         sorted(failed, key=lambda x: x[0]), sessions, latest, data.bisects),
        encoding="utf-8")
    return 1 + len(data.cases) + len(sessions) + len(data.bisects)

