"""The dashboard's pages: plain HTML around Bokeh's plots, every script and style a file of the
site (no CDN: it opens from a folder, an artifact, or GitHub Pages, offline or not)."""

from __future__ import annotations

import datetime
import shutil
from collections.abc import Container, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import bokeh
from bokeh.embed import components
from bokeh.util.paths import bokehjs_path

from tfperf.ab import where
from tfperf.cases.matrix import ID_PARTS
from tfperf.dashboard import bisect_pages
from tfperf.dashboard.html_text import escape as _e
from tfperf.dashboard.html_text import slug
from tfperf.dashboard.html_text import when as _when
from tfperf.dashboard.site_data import ABCase, Failure, Point
from tfperf.ground.vocabulary import REGRESSION, SAME, SLOWER
from tfperf.storage.results_store import BisectRow

BOKEH_JS = f"bokeh-{bokeh.__version__}.min.js"
STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.2em 2em; color: #222; }
table { border-collapse: collapse; margin: 0.6em 0 1.4em; }
th, td { border-bottom: 1px solid #ddd; padding: 3px 8px; text-align: left; font-size: 13px; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
code { font-size: 12px; }
.bad { color: #c44e52; font-weight: 600; }
.quiet { color: #777; }
td.why { font-size: 12px; max-width: 60em; }
select { margin: 0 0.8em 0.4em 0.2em; }
pre.log { font-size: 11px; max-height: 30em; max-width: 90em; overflow: auto; background: #f6f6f6; }
"""
# Hides the cases table's rows that a filter does not match (one select per part of the id).
FILTER_JS = """
function applyFilters() {
  const chosen = {};
  for (const select of document.querySelectorAll("select[data-part]")) {
    if (select.value) chosen[select.dataset.part] = select.value;
  }
  for (const row of document.querySelectorAll("tr[data-case]")) {
    const keep = Object.entries(chosen).every(([part, value]) => row.dataset[part] === value);
    row.style.display = keep ? "" : "none";
  }
}
for (const select of document.querySelectorAll("select[data-part]")) {
  select.addEventListener("change", applyFilters);
}
"""


def _bad(flag: bool) -> str:
    return ' class="bad"' if flag else ""


def page(title: str, body: str, depth: int, plots: Sequence[Any] = (), head: str = "") -> str:
    up = "../" * depth
    script, divs = components(list(plots)) if plots else ("", [])
    for i, div in enumerate(divs):
        body = body.replace(f"<!--plot{i}-->", div)
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{_e(title)}</title>"
            f"<link rel=\"stylesheet\" href=\"{up}static/site.css\">"
            + (f"<script src=\"{up}static/{BOKEH_JS}\"></script>{script}" if plots else "")
            + f"{head}</head><body><p><a href=\"{up}index.html\">tfperf dashboard</a> · "
            f"<a href=\"{up}regressions.html\">regressions</a> · "
            f"<a href=\"{up}compare.html\">compare two sessions</a></p>"
            f"<h1>{_e(title)}</h1>{body}</body></html>\n")


def write_static(site: Path) -> None:
    static = site / "static"
    static.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(Path(bokehjs_path()) / "js" / "bokeh.min.js", static / BOKEH_JS)
    (static / "site.css").write_text(STYLE, encoding="utf-8")
    (static / "filter.js").write_text(FILTER_JS, encoding="utf-8")


def _log(failure: Failure) -> str:
    """The log's path on its runner, and the last lines the store kept (opened on a click)."""
    path = f"<code>{_e(failure.log_path)}</code>"
    if not failure.log_tail:
        return path
    return (f"{path}<details><summary>last lines of the log</summary><pre class=\"log\">"
            f"{_e(failure.log_tail)}</pre></details>")


def _failure_rows(failures: Sequence[Failure], case: str | None = None) -> str:
    rows = "".join(
        f"<tr><td>{_when(f.when)}</td>" + (f"<td><a href=\"cases/{slug(case)}.html\">"
                                           f"<code>{_e(case)}</code></a></td>" if case else "")
        + f"<td>{_e(f.machine_key)}</td><td class=\"bad\">{_e(f.cause)}</td>"
        f"<td>{_e(f.phase)}</td><td>{_e(f.message[:300])}</td><td>{_log(f)}</td></tr>"
        for f in failures)
    head = "<th>case</th>" if case else ""
    return (f"<table><tr><th>when</th>{head}<th>machine</th><th>cause</th><th>phase</th>"
            f"<th>message</th><th>log</th></tr>{rows}</table>")


def _number(value: float | None, form: str, scale: float = 1.0) -> str:
    return "" if value is None else format(value * scale, form)


def case_page(case_id: str, points: Sequence[Point], failures: Sequence[Failure],
              plot: Any, previous: Mapping[str, str], more: str = "",
              builds: Any | None = None) -> str:
    """The case's figures by date (`plot`), then by TensorFlow build where it ran under more
    than one (`builds`), then its latest runs, each with every gated figure, its verdict and the
    reason for it and a link comparing its session with the machine's one before (`previous`),
    its failures, then `more` (its findings, A/B sessions, bisections)."""
    recent = "".join(
        f"<tr><td>{_when(p.when)}</td><td>{_e(p.machine_key)}</td><td class=\"n\">"
        f"{p.examples_per_sec:.1f}</td><td class=\"n\">{_number(p.compile_cpu_s, '.2f')}</td>"
        f"<td class=\"n\">{_number(p.peak_memory_bytes, '.0f', 2**-20)}</td>"
        f"<td class=\"n\">{_number(p.scaling_efficiency, '.1%')}</td>"
        f"<td class=\"n\">{_number(p.mfu, '.1%')}</td>"
        f"<td>{_e(p.tensorflow)} <code>{_e(p.git_hash[:12])}</code></td>"
        f"<td{_bad(p.verdict == REGRESSION)}>{_e(p.verdict or '-')}</td>"
        f"<td class=\"why\">{_e(p.reason)}{_flagged(p)}</td>"
        f"<td>{_compare(p, previous)}</td></tr>"
        for p in list(reversed(points))[:20])
    body = ("<!--plot0-->"
            + ("<h2 id=\"builds\">By TensorFlow build</h2><!--plot1-->" if builds else "")
            + f"<h2>Latest runs</h2><table><tr><th>when</th><th>machine</th><th>examples/s</th>"
            f"<th>compile s</th><th>peak MiB</th><th>scaling</th><th>MFU</th>"
            f"<th>TensorFlow</th><th>verdict</th><th>why</th><th>session</th></tr>{recent}</table>"
            + (f"<h2>Failures</h2>{_failure_rows(list(reversed(failures)))}" if failures else "")
            + more)
    return page(case_id, body, 1, [plot, *([builds] if builds else [])])


def _compare(point: Point, previous: Mapping[str, str]) -> str:
    before = previous.get(point.session)
    target = f"a={quote(before)}&amp;b={quote(point.session)}" if before else \
        f"b={quote(point.session)}"
    return f"<a href=\"../compare.html#{target}\">{_e(point.session)}</a>"


def _flagged(point: Point) -> str:
    return f' <span class="bad">flagged: {_e(point.flagged)}</span>' if point.flagged else ""


def _differences(found: Sequence[Mapping[str, str]] | None) -> str:
    if found is None:
        return "<p class=\"quiet\">What else differed between the sides was not kept then.</p>"
    if not found:
        return "<p>The sides differ in nothing but their specs.</p>"
    rows = "".join(f"<tr><td>{_e(d['kind'])}</td><td><code>{_e(d['name'])}</code></td>"
                   f"<td>{_e(d['A'])}</td><td>{_e(d['B'])}</td></tr>" for d in found)
    return (f"<h2>What differs between the sides ({len(found)})</h2><table><tr><th>what</th>"
            f"<th>name</th><th>A</th><th>B</th></tr>{rows}</table>")


def _where(case_id: str, report: Mapping[str, Any]) -> str:
    """A case's where-report (tfperf.ab.where), as ab.md has it."""
    found = where.report(report)
    table = "" if not found.rows else "<table><tr>" + "".join(
        f"<th>{_e(c)}</th>" for c in where.COLUMNS) + "</tr>" + "".join(
        f"<tr><td><code>{_e(op)}</code></td>" + "".join(f'<td class="n">{_e(v)}</td>'
                                                        for v in rest) + "</tr>"
        for op, *rest in found.rows) + "</table>"
    notes = "".join(f"<p>{_code(note)}</p>" for note in found.notes)
    return (f"<h2>Where in the step: <code>{_e(case_id)}</code></h2><p>{_e(found.heading)}"
            f"</p>{table}{notes}")


def _code(text: str) -> str:
    """Markdown's `code` as HTML's, the rest escaped."""
    parts = _e(text).split("`")
    return "".join(f"<code>{part}</code>" if i % 2 else part for i, part in enumerate(parts))


def ab_page(session: str, cases: Sequence[ABCase], plot: Any | None,
            pages_of: Container[str] = (),
            differences: Sequence[Mapping[str, str]] | None = None) -> str:
    """The session's cases, each linking its case's page where it has one (`pages_of`), then
    every difference between its sides besides what the user named (None: not kept), then
    each profiled case's where-report."""
    rows = "".join(
        f"<tr><td>{_case(c.case_id, pages_of)}</td><td class=\"n\">"
        f"{'' if c.ratio is None else f'{c.ratio:.3f}'}</td><td class=\"n\">"
        f"{'' if c.low is None else f'[{c.low:.3f}, {c.high:.3f}]'}</td>"
        f"<td{_bad(c.verdict != SAME)}>{_e(c.verdict)}</td>"
        f"<td class=\"n\">{c.pairs}</td></tr>" for c in cases)
    body = ("<!--plot0-->" if plot is not None else "") + (
        f"<table><tr><th>case</th><th>B/A</th><th>interval</th><th>verdict</th>"
        f"<th>pairs</th></tr>{rows}</table>") + _differences(differences) + "".join(
        _where(c.case_id, c.where) for c in cases if c.where)
    return page(f"A/B session {session}", body, 1, [plot] if plot is not None else [])


def _case(case: str, pages_of: Container[str], up: str = "../") -> str:
    code = f"<code>{_e(case)}</code>"
    return f"<a href=\"{up}cases/{slug(case)}.html\">{code}</a>" if case in pages_of else code


def front_page(cases: Sequence[str], newest: datetime.datetime | None,
               regressed: Sequence[tuple[str, Point]], failed: Sequence[tuple[str, Failure]],
               ab_sessions: Sequence[tuple[str, Sequence[ABCase]]],
               latest: dict[str, Point], bisects: Sequence[BisectRow] = (), still_open: int = 0,
               head: str = "") -> str:
    night = (f"<p class=\"quiet\">The 24 hours up to the newest result, {_when(newest)} UTC."
             "</p>" if newest else "<p>The store holds no results yet.</p>")
    regressions = "".join(
        f"<tr><td><a href=\"cases/{slug(case)}.html\"><code>{_e(case)}</code></a></td>"
        f"<td>{_e(p.machine_key)}</td><td class=\"n\">{p.examples_per_sec:.1f}</td>"
        f"<td>{_e(p.tensorflow)}</td><td class=\"why\">{_e(p.reason)}</td></tr>"
        for case, p in regressed)
    night += (f"<h3>Regressed ({len(regressed)})</h3>"
              + (f"<table><tr><th>case</th><th>machine</th><th>examples/s</th>"
                 f"<th>TensorFlow</th><th>why</th></tr>{regressions}</table>" if regressed else
                 "<p>None.</p>"))
    night += f"<h3>Failed ({len(failed)})</h3>"
    night += "".join(_failure_rows([f], case) for case, f in failed) if failed else "<p>None.</p>"
    parts = {part: sorted({case.split("-")[i] for case in cases if len(case.split("-")) > i})
             for i, part in enumerate(ID_PARTS)}
    filters = "".join(
        f"<label>{_e(part)}<select data-part=\"{_e(part)}\"><option value=\"\">all</option>"
        + "".join(f"<option>{_e(v)}</option>" for v in values) + "</select></label>"
        for part, values in parts.items() if values)
    rows = ""
    for case in cases:
        data = " ".join(f"data-{part}=\"{_e(value)}\""
                        for part, value in zip(ID_PARTS, case.split("-"), strict=False))
        last = latest.get(case)
        rows += (f"<tr data-case {data}><td><a href=\"cases/{slug(case)}.html\"><code>"
                 f"{_e(case)}</code></a></td><td>{_when(last.when) if last else ''}</td>"
                 f"<td class=\"n\">{f'{last.examples_per_sec:.1f}' if last else ''}</td>"
                 f"<td title=\"{_e(last.reason) if last else ''}\">"
                 f"{_e(last.verdict or '-') if last else 'failed only'}</td></tr>")
    sessions = "".join(
        f"<tr><td><a href=\"ab/{slug(name)}.html\">{_e(name)}</a></td>"
        f"<td>{_when(items[0].when)}</td><td>{_e(items[0].machine_key)}</td>"
        f"<td class=\"n\">{len(items)}</td><td class=\"n\">"
        f"{sum(c.verdict == SLOWER for c in items)}</td></tr>" for name, items in ab_sessions)
    body = (f"<p><a href=\"regressions.html\">Regressions and failures</a>: {still_open} open "
            "(with their history; <a href=\"regressions.xml\">Atom feed</a>).</p>"
            f"<h2>Last night</h2>{night}"
            f"<h2>Cases ({len(cases)})</h2><div>{filters}</div>"
            f"<table><tr><th>case</th><th>last run</th><th>examples/s</th><th>verdict</th></tr>"
            f"{rows}</table>"
            f"<h2>A/B sessions ({len(ab_sessions)})</h2>"
            f"<table><tr><th>session</th><th>when</th><th>machine</th><th>cases</th>"
            f"<th>slower</th></tr>{sessions}</table>"
            f"<h2>Bisections ({len(bisects)})</h2>{bisect_pages.rows(bisects)}"
            f"<script src=\"static/filter.js\"></script>")
    return page("tfperf dashboard", body, 0, head=head)
