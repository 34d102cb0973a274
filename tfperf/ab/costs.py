"""What a side costs besides its steps, judged B/A over the duets: compile time, time to the
first step, peak device memory and peak host memory. A side that compiles twice as long, or
needs 30% more memory, is a finding even when its steps run as fast.

Every duet starts a fresh worker on each side, so each duet gives one B/A of each cost; a
cost's interval is Student's t over the duets' log B/A (the duets are the independent units,
as in verdict.py). Its verdict, against the cost's own floor (ABSettings.time_cost_floor,
memory_cost_floor), at the session's alpha split over the costs (Bonferroni: the costs of one
case are read together):
- `higher`: the whole interval lies above 1 + floor (side B costs more: the case fails);
- `lower`: below 1 - floor;
- `same`: within the floor;
- `undecided`: otherwise, or fewer than two duets measured it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from tfperf.ab.duet_types import SideRounds
from tfperf.ground.vocabulary import HIGHER as HIGHER
from tfperf.ground.vocabulary import LOWER as LOWER
from tfperf.ground.vocabulary import SAME as SAME
from tfperf.ground.vocabulary import SIDE_A, SIDE_B, SIDES, SideName
from tfperf.ground.vocabulary import UNDECIDED as UNDECIDED
from tfperf.ground.vocabulary import CostStatus as CostStatus
from tfperf.measure import figures
from tfperf.options.ab_settings import ABSettings


@dataclass(frozen=True)
class Cost:
    key: str  # in the session file
    label: str  # in the reports
    memory: bool  # judged against the memory floor, else the time floor
    unit: str


COSTS = (Cost("compile_cpu_s", "compile time", False, "s"),
         Cost("time_to_first_step_s", "time to the first step", False, "s"),
         Cost("peak_memory_bytes", "peak device memory", True, "MiB"),
         Cost("peak_rss_bytes", "peak host memory", True, "MiB"))


def of_worker(ready: Mapping[str, Any], finished: Mapping[str, Any]) -> dict[str, float | None]:
    """One worker's costs: the CPU time (all threads) of its first round beyond that of a
    measured round (tracing and compiling: CPU time, since a duet's workers warm up together
    and the wall time of each depends on the others), its start to the end of its first
    round, and its memory peaks."""
    first = float(ready["first_round_s"])
    return {"compile_cpu_s": figures.compile_cpu_s(ready, finished),
            "time_to_first_step_s": float(ready["setup_s"]) + first,
            "peak_memory_bytes": finished.get("peak_memory_bytes"),
            "peak_rss_bytes": finished.get("peak_rss_bytes"),
            # Not judged: where the peak is (phase_lines).
            "memory_by_phase": finished.get("memory_by_phase")}


def per_duet(sides: Mapping[SideName, SideRounds]) -> list[dict[str, Any]]:
    """Each duet whose two workers both finished: its number and each side's costs."""
    numbers = sorted(set(sides[SIDE_A].finished) & set(sides[SIDE_B].finished))
    return [{"duet": n, **{name: of_worker(sides[name].readies[n], sides[name].finished[n])
                           for name in SIDES}} for n in numbers]


@dataclass(frozen=True)
class CostVerdict:
    cost: Cost
    status: CostStatus
    ratio: float | None  # B/A, the geometric mean over the duets
    low: float | None
    high: float | None
    duets: int
    floor: float
    confidence: float
    a_median: float | None
    b_median: float | None

    def describe(self) -> str:
        def shown(value: float | None) -> str:
            if value is None:
                return "none reported"
            return f"{value / 2**20:.0f} MiB" if self.cost.unit == "MiB" else f"{value:.2f} s"

        if self.ratio is None or self.low is None or self.high is None:
            return (f"{self.cost.label}: {self.status} (fewer than two duets measured it on "
                    "both sides: "
                    f"A {shown(self.a_median)}, B {shown(self.b_median)})")
        return (f"{self.cost.label}: {self.status}, B/A {self.ratio:.3f} [{self.low:.3f}, "
                f"{self.high:.3f}] ({self.confidence:.1%} over {self.duets} duets; A "
                f"{shown(self.a_median)}, B {shown(self.b_median)}; floor {self.floor:.0%})")

    def to_json(self) -> dict[str, Any]:
        """Every field but the cost, which the session file keys it by (lines() reads it)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "cost"}


def judge(duets: list[dict[str, Any]], cost: Cost, settings: ABSettings) -> CostVerdict:
    floor = settings.memory_cost_floor if cost.memory else settings.time_cost_floor
    alpha = settings.alpha / len(COSTS)
    pairs = [(d[SIDE_A][cost.key], d[SIDE_B][cost.key]) for d in duets
             if (d[SIDE_A][cost.key] or 0) > 0 and (d[SIDE_B][cost.key] or 0) > 0]

    def median(values: list[float]) -> float | None:
        return float(statistics.median(values)) if values else None

    # Each side's own median, paired or not: a side that reports none (TensorFlow's CPU
    # allocator keeps no statistics with TF_ENABLE_ONEDNN_OPTS=0) is named as such.
    a_median, b_median = (median([v for d in duets if (v := d[side][cost.key] or 0) > 0])
                          for side in SIDES)
    if len(pairs) < 2:
        return CostVerdict(cost, UNDECIDED, None, None, None, len(pairs), floor, 1 - alpha,
                           a_median, b_median)
    # Imported here: most processes that import this module never judge. Student's t quantile
    # as scipy.stats.t.ppf computes it, without importing scipy.stats (0.4 CPU-s).
    from scipy.special import stdtrit

    logs = [math.log(b / a) for a, b in pairs]
    centre = statistics.fmean(logs)
    half = float(stdtrit(len(logs) - 1, 1 - alpha / 2)) * statistics.stdev(logs) \
        / math.sqrt(len(logs))
    ratio, low, high = math.exp(centre), math.exp(centre - half), math.exp(centre + half)
    status: CostStatus = (HIGHER if low > 1 + floor else LOWER if high < 1 - floor
              else SAME if 1 - floor <= low and high <= 1 + floor else UNDECIDED)
    return CostVerdict(cost, status, ratio, low, high, len(pairs), floor, 1 - alpha, a_median,
                       b_median)


def judge_all(duets: list[dict[str, Any]], settings: ABSettings) -> list[CostVerdict]:
    return [judge(duets, cost, settings) for cost in COSTS]


def lines(case: Mapping[str, Any], where: bool = True) -> list[str]:
    """Each cost's verdict, as an A/B session file keeps it; after the device memory's, where
    its peak is (phase_line): always, or (`where` False: the terminal) only for a finding."""
    found = []
    for cost in COSTS:
        kept = (case.get("costs") or {}).get("verdicts", {}).get(cost.key)
        if kept is not None:
            found.append(CostVerdict(cost, **kept).describe())
            if cost.key == "peak_memory_bytes" and (where or kept["status"] in (HIGHER, LOWER)) \
                    and (line := phase_line(case)):
                found.append(line)
    return found


def by_phase(duets: list[dict[str, Any]]) -> dict[str, tuple[float, float]]:
    """Each phase's allocator peak on each side, the median over the duets that report it on
    both, in the order the phases ran."""
    phases: dict[str, list[tuple[float, float]]] = {}
    for duet in duets:
        # [phase, bytes] pairs in the order the phases ran, as the worker says them.
        a, b = (dict(duet[side].get("memory_by_phase") or []) for side in SIDES)
        for phase in [*a, *(p for p in b if p not in a)]:
            if phase in a and phase in b:
                phases.setdefault(phase, []).append((float(a[phase]), float(b[phase])))
    return {phase: (statistics.median(x for x, _ in found), statistics.median(y for _, y in found))
            for phase, found in phases.items()}


def phase_line(case: Mapping[str, Any]) -> str:
    """Where the device memory's peak is on each side: each phase's, A -> B, the highest
    marked; "" where no duet reported phases (a session kept before phases were)."""
    found = by_phase((case.get("costs") or {}).get("duets") or [])
    if not found:
        return ""
    top = {side: max(found, key=lambda p: found[p][i]) for i, side in enumerate("AB")}

    def said(phase: str) -> str:
        a, b = found[phase]
        ratio = f" ({b / a:.2f}x)" if a > 0 else ""
        marks = "".join(f"*{side}" for side in "AB" if top[side] == phase)
        return f"{phase} {a / 2**20:.0f} -> {b / 2**20:.0f} MiB{ratio}{marks}"

    return ("peak device memory by phase, A -> B (median over duets; * the side's highest): "
            + ", ".join(map(said, found)))
