"""A session's plan: which cases it runs, in what order, in how long; what a time budget
leaves out and why; and which share of them is this runner's when several split the work.

The cases come in priority order (for the nightly tier, the selection's: defaults first, then
by the pairs each adds). A budget drops cases from the lowest priority up until the rest fit.
A shard split (`I/N`) deals the cases out by estimated time, longest first, each to the
runner with the least time so far (ties to the lower index): the same cases always land on
the same runner, and the runners' totals differ by at most one case's time.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tfperf.cases.estimate import PlanError
from tfperf.cases.matrix import Case

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)([hms])$")
_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0}


def parse_budget(text: str) -> float | None:
    """Seconds from `4h`, `90m` or `3600s`; None for `none`."""
    if text.strip().lower() == "none":
        return None
    found = _DURATION.match(text.strip().lower())
    if not found or float(found.group(1)) <= 0:
        raise PlanError(f"--perf-budget: {text!r} is not a duration like 4h, 90m or 3600s "
                        "(or none)")
    return float(found.group(1)) * _UNITS[found.group(2)]


def parse_shard(text: str) -> tuple[int, int]:
    """(index, count) from `I/N`, 1 <= I <= N."""
    found = re.match(r"^(\d+)/(\d+)$", text.strip())
    if not found or not 1 <= int(found.group(1)) <= int(found.group(2)):
        raise PlanError(f"--perf-shard: {text!r} is not I/N with 1 <= I <= N (for example 2/8)")
    return int(found.group(1)), int(found.group(2))


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
