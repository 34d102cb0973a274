"""Where in the step a finding is: each side's profiled round, summarised op by op by
its worker (tfperf/worker/telemetry/op_profile.py), compared here; the XLA clusters each side
ran; the allocator's peak by phase is the duets' own (costs.phase_line). Pure: a kept session
file is reported again from what it keeps."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tfperf.gate.summary_and_trends import save
from tfperf.ground.vocabulary import SIDE_A, SIDE_B

SHOWN = 10  # the ops a report lists, the largest changes first


@dataclass(frozen=True)
class OpChange:
    """One op's time per step on each side; None where it is not among the side's largest
    (op_profile.KEEP) and so not known, 0.0 where the side did not run it at all."""

    op: str
    a_s: float | None
    b_s: float | None
    share_a: float | None  # of all the side's op time
    share_b: float | None

    @property
    def ratio(self) -> float | None:
        if self.a_s and self.b_s is not None:
            return self.b_s / self.a_s
        return None

    @property
    def change_s(self) -> float:
        """B's time minus A's, per step (an unknown side counted as none)."""
        return (self.b_s or 0.0) - (self.a_s or 0.0)


def _times(summary: Mapping[str, Any]) -> tuple[dict[str, float], bool]:
    """The side's op times per step, and whether that list is every op it ran."""
    ops = {str(op): float(seconds) for op, seconds, _ in summary.get("ops") or []}
    return ops, bool(summary.get("every_op"))


def compare(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[OpChange]:
    """Every op either side kept, the largest change in time per step first."""
    (times_a, whole_a), (times_b, whole_b) = _times(a), _times(b)
    total_a, total_b = float(a.get("ops_s") or 0.0), float(b.get("ops_s") or 0.0)

    def known(times: dict[str, float], whole: bool, op: str) -> float | None:
        return times.get(op, 0.0 if whole else None)

    changes = []
    for op in [*times_a, *(op for op in times_b if op not in times_a)]:
        a_s, b_s = known(times_a, whole_a, op), known(times_b, whole_b, op)
        changes.append(OpChange(op, a_s, b_s,
                                a_s / total_a if a_s is not None and total_a else None,
                                b_s / total_b if b_s is not None and total_b else None))
    return sorted(changes, key=lambda c: (-abs(c.change_s), c.op))


def _ms(seconds: float | None) -> str:
    return "?" if seconds is None else f"{seconds * 1000:.3f}"


def _share(share: float | None) -> str:
    return "?" if share is None else f"{share:.1%}"


def _clusters(summary: Mapping[str, Any]) -> str:
    clusters = summary.get("clusters") or []
    if not clusters:
        return "none"
    return ", ".join(f"{name} ({size} instructions)" for name, size in clusters)


@dataclass(frozen=True)
class Report:
    """A finding's where-report, for the Markdown (lines) and the dashboard's A/B page alike:
    a sentence, the ops whose time moved most (op, A ms, B ms, B/A, shares), and sentences
    after it whose `code` is marked with backquotes."""

    heading: str
    rows: list[tuple[str, str, str, str, str, str]]
    notes: list[str]


COLUMNS = ("op", "A ms/step", "B ms/step", "B/A", "share A", "share B")


def report(where: Mapping[str, Any]) -> Report:
    """The ops whose time moved most, each side's XLA clusters, the bytes allocated by op where
    the trace has them; or why there is no profile."""
    if where.get("error"):
        return Report(f"No profile: {where['error']}", [], [])
    a, b = where[SIDE_A], where[SIDE_B]
    rows = []
    for change in compare(a, b)[:SHOWN]:
        ratio = "new" if change.a_s == 0.0 and change.b_s else \
            "gone" if change.b_s == 0.0 and change.a_s else \
            f"{change.ratio:.2f}" if change.ratio is not None else "?"
        rows.append((change.op, _ms(change.a_s), _ms(change.b_s), ratio, _share(change.share_a),
                     _share(change.share_b)))
    memory = _allocated(a, b) or ("Memory by op: no allocation in these traces (an allocator "
                                  "without statistics traces none; the phases above say where "
                                  "the peak is).")
    return Report(f"One profiled round a side ({a.get('steps')} steps), outside the measured "
                  f"pairs: all ops {_ms(a.get('ops_s'))} -> {_ms(b.get('ops_s'))} ms a step "
                  "(threads added, so more than the step's wall time where ops run at once).",
                  rows, [f"XLA clusters run: A {_clusters(a)}; B {_clusters(b)}.", memory])


def lines(where: Mapping[str, Any]) -> list[str]:
    """A finding's where-report as Markdown lines."""
    found = report(where)
    if not found.rows:
        return [found.heading, *found.notes]
    return [found.heading, "", f"| {' | '.join(COLUMNS)} |", "|---" * len(COLUMNS) + "|",
            *(f"| `{op}` | {' | '.join(rest)} |" for op, *rest in found.rows), "", *found.notes]


def _allocated(a: Mapping[str, Any], b: Mapping[str, Any]) -> str:
    by_a = {str(op): float(n) for op, n in a.get("allocated_by_op") or []}
    by_b = {str(op): float(n) for op, n in b.get("allocated_by_op") or []}
    if not by_a and not by_b:
        return ""
    ops = sorted(set(by_a) | set(by_b), key=lambda op: -abs(by_b.get(op, 0) - by_a.get(op, 0)))
    return "Bytes allocated a step by op, A -> B: " + ", ".join(
        f"`{_short(op)}` {by_a.get(op, 0) / 2**20:.1f} -> {by_b.get(op, 0) / 2**20:.1f} MiB"
        for op in ops[:5]) + "."


def _short(op: str) -> str:
    """An op's name without the function calls it ran in (`while/body/_1/.../sort/TopKV2`)."""
    return "/".join(op.split("/")[-2:])


def brief(where: Mapping[str, Any]) -> str:
    """The terminal's line: the three largest changes, or why there is no profile."""
    if where.get("error") or SIDE_A not in where:
        return f"where: no profile: {where.get('error')}"
    return "where: largest op changes a step, A -> B: " + ", ".join(
        f"{c.op} {_ms(c.a_s)} -> {_ms(c.b_s)} ms" for c in compare(where[SIDE_A], where[SIDE_B])[:3])


def section(cases: Sequence[Mapping[str, Any]]) -> list[str]:
    """ab.md's where-reports: one a profiled case, after the verdicts."""
    said: list[str] = []
    for case in cases:
        if case.get("where"):
            said += ["", f"### Where: `{case['case_id']}`", "", *lines(case["where"])]
    if said:
        said[:0] = ["", "## Where in the step", "", "Each finding (and each case named by "
                    "--perf-profile) ran one more round a side under TensorFlow's profiler, "
                    "alone, after its pairs; the traces are kept for TensorBoard."]
    return said


def plot(case: Mapping[str, Any], path: Path) -> None:
    """The largest changes' times per step on each side, one bar a side an op."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    found = case["where"]
    changes = list(reversed(compare(found[SIDE_A], found[SIDE_B])[:SHOWN]))
    figure, axes = plt.subplots(figsize=(7, 0.9 + 0.35 * len(changes)))
    rows = np.arange(len(changes))
    for offset, name, colour, times in (
            (0.2, SIDE_A, "#4c72b0", [c.a_s for c in changes]),
            (-0.2, SIDE_B, "#c44e52", [c.b_s for c in changes])):
        axes.barh(rows + offset, [(t or 0.0) * 1000 for t in times], height=0.4, color=colour,
                  label=f"side {name}")
    axes.set_yticks(rows, [c.op for c in changes], fontsize=7)
    save(figure, axes, (f"{case['case_id']}: where", "ms a step (op time, threads added)", ""),
         path)
