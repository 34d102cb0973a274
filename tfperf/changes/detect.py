"""Change points in a case's series across builds: for each figure, Apache Otava over the
builds' medians in build order (the whole series: a trailing window's left edge raised false
alarms, benchmarks/results/change_points.md), at its false-alarm setting (the p-value) and its
least change, figure by figure.

A change point says between which two builds of the series a figure moved, by how much and how
surely. It is a question, not a finding: the A/B of the builds on either side answers it
(tfperf.bisect.changes), and only what the A/B confirms reaches a person.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tfperf.changes import otava_env
from tfperf.storage.build_series import BuildPoint, Series


@dataclass(frozen=True)
class Figure:
    name: str  # a series figure (build_series.FIGURES)
    label: str
    min_change: float  # the least relative change reported
    worse_up: bool  # a rise is the worse direction (memory, compile time)


# The least change per figure. Speed's 2% is measured: Otava at p 0.001 and 2% over simulated
# nightly series at a 2% run-to-run CV caught 95-97.5% of 3% steps with 1.3-1.6 alarms a
# case-year where none was put (benchmarks/results/change_points.md). The others are set from
# how much each moves between unchanged sessions on the project's CPU hosts: peak memory is
# nearly exact (5% is far above its noise), compile time moves 2.3x between sessions of one
# build (ResNet-20: 0.54 to 1.26 s; ../docs/design/gate.md), the loss after the same steps of
# one build agrees to its precision's tolerance.
FIGURES = (Figure("examples_per_sec", "examples/s", 0.02, False),
           Figure("peak_memory_bytes", "peak memory", 0.05, True),
           Figure("compile_cpu_s", "compile time", 0.5, True),
           Figure("loss_last", "loss after the measured rounds", 0.01, True))
BY_NAME = {f.name: f for f in FIGURES}
MAX_PVALUE = 0.001  # Nyrkio's default, and the setting the measurement above used
WINDOW = 30  # builds: Otava's window_len, as measured


@dataclass(frozen=True)
class ChangePoint:
    figure: Figure
    series: Series
    before: BuildPoint  # the last build before the change
    after: BuildPoint  # the first build after it
    change: float  # the relative change of the figure's level, after over before, minus one
    pvalue: float

    @property
    def worse(self) -> bool:
        return self.change > 0 if self.figure.worse_up else self.change < 0

    def document(self) -> dict[str, object]:
        """What a bisection's report keeps of the change point that asked for it."""
        return {"figure": self.figure.name, "machine_kind": self.series.machine_kind,
                "series_key": self.series.series_key, "before": self.before.label,
                "after": self.after.label, "change": self.change, "pvalue": self.pvalue,
                "described": self.describe()}

    def describe(self) -> str:
        direction = "worse" if self.worse else "better"
        return (f"{self.figure.label} {self.change:+.1%} ({direction}) from {self.before.label} "
                f"to {self.after.label}, p={self.pvalue:.2g}")


def detect(series: Sequence[Series], figures: Sequence[Figure], cache: Path,
           max_pvalue: float = MAX_PVALUE) -> list[ChangePoint]:
    """The change points of each series' figures, by Otava, in build order; a figure a series
    has on fewer than three builds has none (a change needs a level before and after)."""
    asked: dict[str, tuple[Series, Figure, list[BuildPoint]]] = {}
    lines: dict[float, list[dict[str, object]]] = {}
    for s in series:
        for figure in figures:
            builds = [b for b in s.builds if b.median(figure.name) is not None]
            if len(builds) < 3:
                continue
            key = f"{s.machine_kind}/{s.series_key}/{figure.name}"
            asked[key] = (s, figure, builds)
            lines.setdefault(figure.min_change, []).append(
                {"id": key, "values": [b.median(figure.name) for b in builds]})
    found: list[ChangePoint] = []
    for min_change, batch in lines.items():  # one detector run per least change
        points = otava_env.detect(cache, batch, WINDOW, max_pvalue, min_change)
        for key, said in points.items():
            s, figure, builds = asked[key]
            for index, percent, pvalue in said:
                found.append(ChangePoint(figure, s, builds[int(index) - 1], builds[int(index)],
                                         percent / 100, pvalue))
    return sorted(found, key=lambda p: (p.series.machine_kind, p.series.series_key,
                                        p.after.order(), p.figure.name))
