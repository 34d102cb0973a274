"""The nightly selection: a covering, deterministic subset of the nightly tier's product.

The nightly tier is the whole product of the axes (12,475 cases with the shipped workloads),
weeks of GPU time. The night runs a selection instead that holds, on the runner at hand:

- GPU cases only where there is a GPU (CPU cases belong to the smoke tier and pull requests);
  a runner without one keeps its CPU cases;
- every workload's default case on every device count the runner has (several devices: the
  default case with the `replicated` strategy, the data-parallel default);
- every pair of values of the axes that interact, within each workload, that some valid and
  runnable case holds.

The pairs come from allpairspy's covering-array generator, which fills a case value by value
and is told, at every step, whether the values so far can still become a valid, runnable case
(the prefixes of the valid cases); it gives up on a few pairs that only a rare completion
holds, and each of those is then covered by the valid case that covers most pairs still
missing. Ties are broken by case id, so the same machine gets the same selection every night,
and each case gathers history night after night.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from allpairspy import AllPairs

from tfperf.cases.matrix import Case, default_case
from tfperf.workload import WorkloadInfo

# The axes that interact: every pair of their values is covered, within each workload.
PAIRED = ("device_count", "workers", "xla", "data_format", "placement", "strategy", "precision",
          "input", "preprocess")
Pair = tuple[str, str, str, str, str]  # workload, axis, value, axis, value


@functools.cache  # the greedy choices below ask each case's pairs again at every step
def pairs(case: Case) -> frozenset[Pair]:
    values = case.axis_values()
    return frozenset((case.workload, a, values[a], b, values[b])
                     for a, b in itertools.combinations(PAIRED, 2))


def pairs_of(cases: Iterable[Case]) -> set[Pair]:
    return {pair for case in cases for pair in pairs(case)}


@dataclass(frozen=True)
class Selection:
    cases: tuple[Case, ...]  # in priority order: defaults first, then by pairs they add
    defaults: frozenset[Case]
    valid_pairs: frozenset[Pair]  # every pair some valid, runnable case of the tier holds

    def covered(self, cases: Iterable[Case] | None = None) -> float:
        """The fraction of the valid pairs that `cases` (default: the selection) hold."""
        held = pairs_of(self.cases if cases is None else cases) & self.valid_pairs
        return len(held) / len(self.valid_pairs) if self.valid_pairs else 1.0


def _defaults(universe: Sequence[Case], workloads: Mapping[str, WorkloadInfo]) -> list[Case]:
    """Each workload's default case on every device count and kind the universe has."""
    wanted = []
    for case in universe:
        default = default_case(case, workloads[case.workload])
        if case.device_count > 1:
            default = replace(default, strategy="replicated")
        if default == case:
            wanted.append(case)
    return sorted(set(wanted), key=lambda c: c.id)


def _generated(cases: Sequence[Case]) -> list[Case]:
    """allpairspy's rows over one workload's valid cases (see the module's docstring)."""
    by_values = {tuple(c.axis_values()[a] for a in PAIRED): c for c in cases}
    prefixes = {values[:i] for values in by_values for i in range(len(PAIRED) + 1)}
    parameters = [sorted({values[i] for values in by_values}) for i in range(len(PAIRED))]
    if any(len(p) < 2 for p in parameters):
        # allpairspy needs two values an axis; with fewer, only the top-up covers.
        return []
    rows = AllPairs(parameters, filter_func=lambda row: tuple(row) in prefixes)
    return [by_values[tuple(row)] for row in rows if tuple(row) in by_values]


def _top_up(chosen: list[Case], universe: Sequence[Case], valid: set[Pair]) -> list[Case]:
    """Cases from the universe covering the valid pairs still missing, most new pairs first."""
    missing = valid - pairs_of(chosen)
    added = []
    candidates = sorted(universe, key=lambda c: c.id)
    while missing:
        # Only cases that still add a pair can be chosen: the list shrinks at every step
        # (the nightly tier's 12,475 scanned once, not at each of the steps), in id order.
        candidates = [c for c in candidates if not pairs(c).isdisjoint(missing)]
        best = max(candidates, key=lambda c: len(pairs(c) & missing))
        added.append(best)
        missing -= pairs(best)
    return added


def _by_priority(cases: list[Case], defaults: set[Case]) -> list[Case]:
    """Defaults first (by id); then, greedily, the case adding most pairs not yet held, so that
    cutting from the end loses as little coverage as possible."""
    ordered = sorted(defaults, key=lambda c: c.id)
    held = pairs_of(ordered)
    rest = sorted(set(cases) - defaults, key=lambda c: c.id)
    while rest:
        best = max(rest, key=lambda c: len(pairs(c) - held))
        ordered.append(best)
        held |= pairs(best)
        rest.remove(best)
    return ordered


def nightly(universe: Sequence[Case], workloads: Mapping[str, WorkloadInfo],
            runnable: Callable[[Case], bool]) -> Selection:
    """The selection from `universe` (the nightly tier's valid cases) for a runner on which
    `runnable` says which cases can run."""
    here = [c for c in universe if runnable(c)]
    if any(c.device_kind == "gpu" for c in here):
        here = [c for c in here if c.device_kind == "gpu"]
    defaults = set(_defaults(here, workloads))
    chosen: list[Case] = sorted(defaults, key=lambda c: c.id)
    for name in sorted({c.workload for c in here}):
        mine = [c for c in here if c.workload == name]
        for kind in sorted({c.device_kind for c in mine}):
            chosen += _generated([c for c in mine if c.device_kind == kind])
    valid = pairs_of(here)
    chosen += _top_up(chosen, here, valid)
    return Selection(tuple(_by_priority(list(dict.fromkeys(chosen)), defaults)),
                     frozenset(defaults), frozenset(valid))
