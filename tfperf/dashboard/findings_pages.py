"""The dashboard's findings (tfperf.storage.findings): a page with every regression, failure,
slower A/B case and culprit and its history (when it began, how many sessions it lasted, the
examples/s before and during, whether it is still open), open ones first, as asv's regressions
page; and the same as an Atom feed (regressions.xml) that a chat tool or feed reader follows."""

from __future__ import annotations

import datetime
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Collection, Sequence

from tfperf.dashboard.html_text import escape as _e
from tfperf.dashboard.html_text import slug, when
from tfperf.ground.vocabulary import AB_SLOWER, CULPRIT, FAILURE, REGRESSION, FindingKind
from tfperf.storage.findings import Finding

FEED = "regressions.xml"
PAGE = "regressions.html"
FEED_ENTRIES = 200  # the newest; the page lists every one
ATOM = "http://www.w3.org/2005/Atom"
STREAKS: tuple[FindingKind, ...] = (REGRESSION, FAILURE)


def link(finding: Finding, cases: Collection[str], up: str = "") -> str:
    """Where a finding is shown: its bisection's page, its A/B session's, or its case's (a case
    with no page of its own, as an A/B-only case, links nowhere)."""
    if finding.kind == CULPRIT:
        return f"{up}bisects/{slug(finding.origin)}.html"
    if finding.kind == AB_SLOWER:
        return f"{up}ab/{slug(finding.origin)}.html"
    return f"{up}cases/{slug(finding.case_id)}.html" if finding.case_id in cases else ""


def still_open(finding: Finding) -> bool:
    """A streak that no clean session has ended (a slower A/B case or a culprit is an event)."""
    return finding.kind in STREAKS and finding.ended is None


def _status(finding: Finding) -> str:
    if finding.kind not in STREAKS:
        return ""
    return '<span class="bad">open</span>' if finding.ended is None else \
        f"ended {when(finding.ended)}"


def _rates(finding: Finding) -> str:
    if finding.factor is None:
        return ""
    return (f"{finding.before:.1f} → {finding.rate:.1f} "
            f"(<span class=\"bad\">{finding.factor - 1:+.1%}</span>)")


def ordered(found: Sequence[Finding]) -> list[Finding]:
    """Open streaks first, then the rest; newest first within each."""
    return sorted(found, key=lambda f: (not still_open(f), -f.when.timestamp()))


def rows(found: Sequence[Finding], cases: Collection[str], up: str = "") -> str:
    """A table of findings (the regressions page's, and a case page's own)."""
    if not found:
        return "<p>None.</p>"
    body = ""
    for f in ordered(found):
        target = link(f, cases, up)
        case = f"<code>{_e(f.case_id)}</code>"
        shown = f'<a href="{target}">{case}</a>' if target else case
        body += (f"<tr><td>{_e(f.kind)}</td><td>{shown}</td><td>{_e(f.machine_key)}</td>"
                 f"<td>{when(f.when)}</td>"
                 f"<td class=\"n\">{f.sessions}</td><td>{when(f.last) if f.last else ''}</td>"
                 f"<td>{_status(f)}</td><td class=\"n\">{_rates(f)}</td>"
                 f"<td class=\"why\">{_e(f.detail)}</td></tr>")
    return ("<table><tr><th>kind</th><th>case</th><th>machine</th><th>began</th>"
            "<th>sessions</th><th>last seen</th><th>now</th><th>examples/s before → during</th>"
            f"<th>detail</th></tr>{body}</table>")


def body(found: Sequence[Finding], cases: Collection[str]) -> str:
    still = sum(map(still_open, found))
    return (f"<p>{len(found)} findings, {still} still open. A regression or a failure is a "
            "streak of sessions in a row in which a case, on one machine, regressed or failed "
            "the same way, until a session in which it ran clean. "
            f"<a href=\"{FEED}\">Atom feed</a> (for a chat tool or a feed reader).</p>"
            + rows(found, cases))


def _time(moment: datetime.datetime) -> str:
    return moment.astimezone(datetime.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def atom(found: Sequence[Finding], cases: Collection[str], base_url: str) -> str:
    """The newest findings as an Atom feed. Links are absolute under `base_url` (the site's
    public address, e.g. its GitHub Pages URL), else relative to the feed."""
    ET.register_namespace("", ATOM)
    newest = sorted(found, key=lambda f: f.when, reverse=True)[:FEED_ENTRIES]
    feed = ET.Element(f"{{{ATOM}}}feed")

    def add(parent: ET.Element, tag: str, text: str | None = None, **attributes: str
            ) -> ET.Element:
        element = ET.SubElement(parent, f"{{{ATOM}}}{tag}", attributes)
        element.text = text
        return element

    add(feed, "title", "tfperf: regressions, failures, slower A/B cases and culprits")
    add(feed, "id", f"urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, base_url + FEED)}")
    add(feed, "updated", _time(newest[0].when) if newest else "1970-01-01T00:00:00Z")
    add(feed, "link", rel="self", href=base_url + FEED)
    add(feed, "link", rel="alternate", type="text/html", href=base_url + PAGE)
    add(add(feed, "author"), "name", "tfperf")
    for finding in newest:
        entry = add(feed, "entry")
        add(entry, "id", f"urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, 'tfperf:' + finding.key)}")
        add(entry, "title", finding.summary)
        add(entry, "updated", _time(finding.when))
        add(entry, "link", rel="alternate", type="text/html",
            href=base_url + (link(finding, cases) or PAGE))
        add(entry, "category", term=finding.kind)
        add(entry, "content", finding.detail, type="text")
    return ('<?xml version="1.0" encoding="utf-8"?>\n'
            + ET.tostring(feed, encoding="unicode") + "\n")
