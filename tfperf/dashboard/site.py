"""The dashboard's pages written from the store's data: the front page, a page per case, one
per A/B session and one per bisection, in parallel processes (tfperf-dashboard,
tfperf/commands/tfperf_dashboard.py, builds it)."""

from __future__ import annotations

import datetime
import multiprocessing
import os
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from tfperf.dashboard import (
    bisect_pages,
    build_plots,
    change_marks,
    compare_page,
    findings_pages,
    pages,
    plots,
    site_data,
)
from tfperf.dashboard.html_text import escape, slug
from tfperf.ground.vocabulary import REGRESSION
from tfperf.storage.findings import Finding
from tfperf.storage.results_store import BisectRow

NIGHT = datetime.timedelta(hours=24)


@dataclass
class Links:
    """What a page links to besides its own: the cases that have a page, each session's previous
    one on its machine, and each case's findings, A/B sessions and bisections."""

    cases: set[str]
    previous: dict[str, str]
    findings: dict[str, list[Finding]] = field(default_factory=lambda: defaultdict(list))
    ab: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    bisects: dict[str, list[BisectRow]] = field(default_factory=lambda: defaultdict(list))

    @classmethod
    def of(cls, data: site_data.SiteData, previous: dict[str, str]) -> Links:
        found = cls(set(data.cases), previous)
        for finding in data.findings:
            found.findings[finding.case_id].append(finding)
        for session, cases in data.ab.items():
            for case in cases:
                found.ab[case.case_id].append(session)
        for bisect in data.bisects:
            found.bisects[bisect.case_id].append(bisect)
        return found

    def more(self, case: str) -> str:
        """A case page's sections after its runs: its findings, A/B sessions, bisections."""
        said = ""
        if self.findings.get(case):
            said += ("<h2>Findings</h2>"
                     + findings_pages.rows(self.findings[case], self.cases, "../"))
        if self.ab.get(case):
            said += "<h2>A/B sessions</h2><p>" + ", ".join(
                f'<a href="../ab/{slug(s)}.html">{escape(s)}</a>' for s in self.ab[case]) + "</p>"
        found = change_marks.marks(self.bisects.get(case, []))
        if found:
            said += ("<h2 id=\"changes\">Change points, answered by A/B</h2>"
                     + change_marks.rows(found))
        if self.bisects.get(case):
            said += "<h2>Bisections</h2>" + bisect_pages.rows(self.bisects[case], "../")
        return said


# What the page-writing processes read: forked after it is set, each has it without a copy.
_SITE: tuple[site_data.SiteData, Path, Links] | None = None
# The newest A/B sessions have a plot as well as their table: a year of nightly sessions would
# otherwise double the build (each plot is a Bokeh document to serialise).
PLOTTED_AB_SESSIONS = 30


def _write_page(task: tuple[str, str, bool]) -> None:
    assert _SITE is not None
    data, site, links = _SITE
    kind, name, plotted = task
    if kind == "cases":
        points, failures = data.runs.get(name, []), data.failures.get(name, [])
        text = pages.case_page(name, points, failures, plots.case_trends(name, points, failures),
                               links.previous, links.more(name),
                               build_plots.builds_plot(
                                   name, points, change_marks.marks(links.bisects.get(name, []))))
    else:
        cases = data.ab[name]
        text = pages.ab_page(name, cases, plots.ab_session(name, cases) if plotted else None,
                             links.cases, data.differences.get(name))
    (site / kind / f"{slug(name)}.html").write_text(text, encoding="utf-8")


def build(data: site_data.SiteData, site: Path, workers: int | None = None,
          base_url: str = "") -> int:
    """Write the site under `site`, its pages in `workers` processes (default: one per CPU,
    up to 4: Bokeh's serialisation is the build's time); how many pages. `base_url`, the
    site's public address, makes the feed's links absolute."""
    global _SITE
    pages.write_static(site)
    measured = compare_page.sessions(data)
    compare_page.write(site, measured)
    links = Links.of(data, compare_page.previous(measured))
    (site / "cases").mkdir(exist_ok=True)
    (site / "ab").mkdir(exist_ok=True)
    sessions = sorted(data.ab.items(), key=lambda item: item[1][0].when, reverse=True)
    tasks = [("cases", case, True) for case in data.cases] + [
        ("ab", name, i < PLOTTED_AB_SESSIONS) for i, (name, _) in enumerate(sessions)]
    _SITE = (data, site, links)
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
                 if since and p.when > since and p.verdict == REGRESSION]
    failed = [(case, f) for case, fails in data.failures.items() for f in fails
              if since and f.when > since]
    latest = {case: points[-1] for case, points in data.runs.items()}
    (site / "bisects").mkdir(exist_ok=True)
    for bisect in data.bisects:  # a handful, no plots: written here
        (site / "bisects" / f"{slug(bisect.id)}.html").write_text(
            pages.page(f"Bisection {bisect.id}", bisect_pages.body(bisect), 1), encoding="utf-8")
    feed = (f'<link rel="alternate" type="application/atom+xml" title="tfperf findings" '
            f'href="{findings_pages.FEED}">')
    (site / "index.html").write_text(
        pages.front_page(data.cases, newest, sorted(regressed, key=lambda x: x[0]),
                         sorted(failed, key=lambda x: x[0]), sessions, latest, data.bisects,
                         sum(map(findings_pages.still_open, data.findings)), feed),
        encoding="utf-8")
    (site / findings_pages.PAGE).write_text(pages.page(
        "Regressions and failures", findings_pages.body(data.findings, links.cases), 0,
        head=feed), encoding="utf-8")
    (site / findings_pages.FEED).write_text(
        findings_pages.atom(data.findings, links.cases, base_url), encoding="utf-8")
    (site / compare_page.PAGE).write_text(pages.page("Compare two sessions", compare_page.body(),
                                                     0), encoding="utf-8")
    return 3 + len(data.cases) + len(sessions) + len(data.bisects)

