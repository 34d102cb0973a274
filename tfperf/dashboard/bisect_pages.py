"""The dashboard's bisections (tfperf-bisect): a row each on the front page, newest first, and
a page each with every step: what it compared, B/A and its interval, the verdict, its A/B
session (a page of its own, like every A/B session's)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tfperf.dashboard.html_text import escape as _e
from tfperf.dashboard.html_text import slug, when
from tfperf.ground.vocabulary import SKIPPED
from tfperf.storage.results_store import BisectRow


def rows(bisects: Sequence[BisectRow], up: str = "") -> str:
    """A table of bisections, newest first: the front page's (`up` leads from a page in a
    folder to the site's root)."""
    if not bisects:
        return "<p>None.</p>"
    body = "".join(
        f"<tr><td><a href=\"{up}bisects/{slug(b.id)}.html\">{_e(b.id)}</a></td>"
        f"<td>{when(b.when)}</td><td><a href=\"{up}cases/{slug(b.case_id)}.html\"><code>"
        f"{_e(b.case_id)}</code></a></td><td>{_e(b.kind)}</td><td>{_e(b.outcome)}</td>"
        f"<td><code>{_e(b.culprit or '')}</code></td></tr>"
        for b in sorted(bisects, key=lambda b: b.when, reverse=True))
    return ("<table><tr><th>bisection</th><th>when</th><th>case</th><th>of</th>"
            f"<th>outcome</th><th>culprit</th></tr>{body}</table>")


def _label(doc: dict[str, Any], index: object) -> str:
    candidates = doc.get("candidates") or []
    return str(candidates[index]["label"]) if isinstance(index, int) and \
        0 <= index < len(candidates) else ""


def _step(doc: dict[str, Any], number: int, step: dict[str, Any]) -> str:
    judged = step.get("verdict") != SKIPPED
    ratio = f"{step['ratio']:.3f}" if judged and step.get("ratio") is not None else ""
    interval = (f"[{step['low']:.3f}, {step['high']:.3f}] at {step['confidence']:.2%}"
                if judged and step.get("low") is not None else "")
    verdict = str(step.get("verdict", "")) + ("" if judged else f": {step.get('reason', '')}")
    session = str(step.get("session") or "")
    link = f'<a href="../ab/{slug(session)}.html">{_e(session)}</a>' if session else ""
    cells = [f"{number} ({_e(step.get('role', ''))})",
             f"<code>{_e(_label(doc, step.get('candidate')))}</code>",
             f"<code>{_e(_label(doc, step.get('against')))}</code>", ratio, interval,
             _e(verdict), str(step.get("pairs", "")) if judged else "",
             str(step.get("seconds", "")), link]
    return "<tr>" + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>"


def body(bisect: BisectRow) -> str:
    """A bisection's page body: how it ended, then every step."""
    doc = dict(bisect.document)
    said = (f"<p>{_e(bisect.kind)} bisection of <a href=\"../cases/{slug(bisect.case_id)}.html\">"
            f"<code>{_e(bisect.case_id)}</code></a> on {_e(bisect.machine_key)}, "
            f"{when(bisect.when)} UTC: <b>{_e(bisect.outcome)}</b>"
            + (f"; culprit <code>{_e(bisect.culprit)}</code>" if bisect.culprit else "")
            + (f", last good <code>{_e(bisect.last_good)}</code>" if bisect.last_good else "")
            + "</p>")
    steps = "".join(_step(doc, i, step) for i, step in enumerate(doc.get("steps", []), 1))
    return (f"{said}<table><tr><th>step</th><th>B (later)</th><th>A (earlier)</th>"
            f"<th>B/A</th><th>interval</th><th>verdict</th><th>pairs</th><th>seconds</th>"
            f"<th>A/B session</th></tr>{steps}</table>")
