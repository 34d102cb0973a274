"""A session's plan: which cases it runs, in what order, in how long; what a time budget
leaves out and why; and which share of them is this runner's when several split the work.

The cases come in priority order (for the nightly tier, the selection's: defaults first, then
by the pairs each adds). A budget drops cases from the lowest priority up until the rest fit.
A shard split (`I/N`) deals the cases out by estimated time, longest first, each to the
runner with the least time so far (ties to the lower index): the same cases always land on
the same runner, and the runners' totals differ by at most one case's time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tfperf.cases.matrix import Case


@dataclass(frozen=True)
class Planned:
    case: Case
    seconds: float
    source: str  # "history" or "model"


def within_budget(planned: Sequence[Planned], budget_s: float | None
                  ) -> tuple[list[Planned], list[Planned]]:
    """(kept, dropped): the lowest-priority cases dropped until the rest fit the budget."""
    kept = list(planned)
    dropped: list[Planned] = []
    if budget_s is None:
        return kept, dropped
    while kept and sum(p.seconds for p in kept) > budget_s:
        dropped.insert(0, kept.pop())
    return kept, dropped


def shard(planned: Sequence[Planned], index: int, count: int) -> list[Planned]:
    """Runner `index` of `count`'s share, in the plan's order (see the module's docstring)."""
    loads = [0.0] * count
    owner: dict[Case, int] = {}
    for item in sorted(planned, key=lambda p: (-p.seconds, p.case.id)):
        runner = min(range(count), key=lambda i: (loads[i], i))
        owner[item.case] = runner
        loads[runner] += item.seconds
    return [p for p in planned if owner[p.case] == index - 1]


def hours(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.3g} s"
    minutes = round(seconds / 60)
    return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min"


def describe(title: str, kept: Sequence[Planned], dropped: Sequence[Planned],
             coverage: Callable[[Sequence[Case]], str], budget_s: float | None) -> list[str]:
    """The plan as the session prints it, before any case runs."""
    total = sum(p.seconds for p in kept)
    sources = {s: sum(p.source == s for p in kept) for s in ("history", "model")}
    budget = f" of a {hours(budget_s)} budget" if budget_s is not None else ""
    lines = [f"{title}: {len(kept)} cases, {coverage([p.case for p in kept])}, estimated "
             f"{hours(total)}{budget} ({sources['history']} from their history, "
             f"{sources['model']} from the model)"]
    lines += [f"  {p.case.id}  {hours(p.seconds)} ({p.source})" for p in kept]
    if dropped:
        lines.append(f"left out by the budget, lowest priority first ({len(dropped)}, "
                     f"{hours(sum(p.seconds for p in dropped))}):")
        lines += [f"  {p.case.id}  {hours(p.seconds)} ({p.source})" for p in dropped]
    return lines
