"""What ends an A/B case as a finding, the first that holds: side B slower, training to other
numbers, or costing more beyond the floor. A finding fails the case and is profiled
(profiled_round.py) before it does, so that the report says where."""

from __future__ import annotations

from collections.abc import Sequence

from tfperf.ab import costs, numerics_check
from tfperf.ab.verdict import SLOWER, Verdict
from tfperf.ground.failures import CaseFailure


def first_finding(final: Verdict, numerics: numerics_check.NumericsVerdict | None,
                  judged: Sequence[costs.CostVerdict]) -> CaseFailure | None:
    if final.status == SLOWER:
        return CaseFailure("slower", f"side B is slower than side A: {final.figures()}")
    if numerics is not None and numerics.status == numerics_check.DIFFER:
        return CaseFailure("numerics_differ", "side B trains to other numbers than side A: "
                           f"{'; '.join(numerics.problems)}")
    more = [v.describe() for v in judged if v.status == costs.HIGHER]
    if more:
        return CaseFailure("costs_more", "side B costs more than side A beyond the floor: "
                           f"{'; '.join(more)}")
    return None
