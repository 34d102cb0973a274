"""The change points of a case's series that `tfperf-bisect changes` answered, as the dashboard
shows them: a mark on the series' plot by build, at the first build after the change, with its
confirmation's B/A and interval, and a row each under the plots. A change point its A/B did not
confirm is marked too, grey and said to be not confirmed: never a regression."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tfperf.dashboard.html_text import escape as _e
from tfperf.dashboard.html_text import slug
from tfperf.ground.vocabulary import WORSE_VERDICTS
from tfperf.storage.results_store import BisectRow

CONFIRMED_COLOUR = "#c44e52"
NOT_CONFIRMED_COLOUR = "#8c8c8c"


@dataclass(frozen=True)
class Mark:
    figure: str  # the series figure that moved (build_series.FIGURES)
    machine_kind: str
    series_key: str  # the configuration whose series moved
    before: str  # the series' builds on either side of the change, as the plot labels them
    after: str
    described: str  # the change point in one line (ChangePoint.describe)
    confirmed: bool  # the A/B of the two builds found the figure worse
    ratio: float | None  # the confirmation's B/A and interval; None where it was not measured
    low: float | None
    high: float | None
    culprit: str | None
    bisection: str

    @property
    def said(self) -> str:
        """What the confirmation found, in a few words: the mark's label."""
        measured = (f"B/A {self.ratio:.3f} [{self.low:.3f}, {self.high:.3f}]"
                    if self.ratio is not None and self.low is not None
                    and self.high is not None else "not measured")
        if not self.confirmed:
            return f"not confirmed: {measured}"
        return f"confirmed: {measured}" + (f", culprit {self.culprit}" if self.culprit else "")


def marks(bisects: Sequence[BisectRow]) -> list[Mark]:
    """The change points among a case's bisections, oldest first; a bisection asked for by
    hand (no change point in its report) has none."""
    found = []
    for bisect in bisects:
        point = bisect.document.get("change_point")
        if not point:
            continue
        steps = bisect.document.get("steps") or [{}]
        confirm = steps[0]
        found.append(Mark(
            str(point["figure"]), str(point.get("machine_kind", "")),
            str(point.get("series_key", "")), str(point["before"]),
            str(point["after"]), str(point.get("described", "")),
            confirm.get("verdict") in WORSE_VERDICTS, confirm.get("ratio"), confirm.get("low"),
            confirm.get("high"), bisect.culprit, bisect.id))
    return found


def rows(found: Sequence[Mark], up: str = "../") -> str:
    """The case page's table of its change points and what their A/B said."""
    body = "".join(
        f"<tr><td>{_e(m.described)}</td><td>{_e(m.machine_kind)}</td>"
        f"<td style=\"color:{CONFIRMED_COLOUR if m.confirmed else NOT_CONFIRMED_COLOUR}\">"
        f"{_e(m.said)}</td><td><a href=\"{up}bisects/{slug(m.bisection)}.html\">"
        f"{_e(m.bisection)}</a></td></tr>"
        for m in found)
    return ("<table><tr><th>change point</th><th>machine</th><th>its A/B</th>"
            f"<th>bisection</th></tr>{body}</table>")
