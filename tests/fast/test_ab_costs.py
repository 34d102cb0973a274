"""What each A/B side costs besides its steps: compile time, time to the first step, peak
device and host memory, B/A over the duets with a verdict against a floor of their own. Real
sessions: an A/A says no cost is higher and memory the same; side B made to compile 2 s longer
and hold 300 MiB more (--perf-inject-cost) fails the case `costs_more`, naming each."""

from __future__ import annotations

from typing import Any

import pytest

from tfperf.ab import costs
from tfperf.options.ab_settings import ABSettings


def _duets(a: list[float], b: list[float], key: str = "compile_cpu_s") -> list[dict[str, Any]]:
    empty = {c.key: None for c in costs.COSTS}
    return [{"duet": n, "A": {**empty, key: x}, "B": {**empty, key: y}}
            for n, (x, y) in enumerate(zip(a, b, strict=True), 1)]


def test_a_cost_is_judged_over_the_duets_against_its_own_floor() -> None:
    settings = ABSettings()
    compile_time = costs.COSTS[0]
    higher = costs.judge(_duets([1.0, 1.1, 0.9, 1.0], [2.0, 2.3, 1.7, 2.1]), compile_time,
                         settings)
    assert higher.status == costs.HIGHER and higher.low is not None and higher.low > 1.25
    assert higher.confidence == pytest.approx(1 - settings.alpha / 4)  # split over 4 costs
    same = costs.judge(_duets([1.0, 1.1, 0.9, 1.0], [1.02, 1.08, 0.91, 0.99]), compile_time,
                       settings)
    assert same.status == costs.SAME
    lower = costs.judge(_duets([2.0, 2.2, 1.8, 2.0], [1.0, 1.1, 0.9, 1.0]), compile_time,
                        settings)
    assert lower.status == costs.LOWER
    wide = costs.judge(_duets([1.0, 1.0, 1.0, 1.0], [0.6, 1.6, 0.9, 1.5]), compile_time,
                       settings)
    assert wide.status == costs.UNDECIDED
    # A duet that measured nothing (a compile time at or below zero) does not count.
    one = costs.judge(_duets([1.0, -0.1], [1.0, 1.0]), compile_time, settings)
    assert (one.status, one.duets, one.ratio) == (costs.UNDECIDED, 1, None)
    assert one.describe() == ("compile time: undecided (fewer than two duets measured it on "
                              "both sides: A 1.00 s, B 1.00 s)")
    memory = costs.COSTS[2]
    # TensorFlow's CPU allocator keeps no statistics with TF_ENABLE_ONEDNN_OPTS=0: side A
    # reports no device memory, and the line says so.
    blind = costs.judge(_duets([None] * 4, [130 * 2**20] * 4, memory.key), memory, settings)  # type: ignore[list-item]
    assert blind.describe() == ("peak device memory: undecided (fewer than two duets "
                                "measured it on both sides: A none reported, B 130 MiB)")
    heavier = costs.judge(_duets([48 * 2**20] * 4, [348 * 2**20] * 4, memory.key), memory,
                          settings)
    assert heavier.status == costs.HIGHER and heavier.describe().startswith(
        "peak device memory: higher, B/A 7.250 [7.250, 7.250] (97.5% over 4 duets; A 48 MiB, "
        "B 348 MiB; floor 10%)")


def test_where_each_side_s_memory_peak_is_is_said_phase_by_phase() -> None:
    """Each phase's allocator peak, the median over the duets that report it on both
    sides, in the order the phases ran; the line names each side's highest."""
    mib = 2**20

    def side(compiling: float) -> dict[str, Any]:
        return {"memory_by_phase": [["building", 10 * mib], ["compiling", compiling * mib],
                                    ["measured rounds", 40 * mib]]}

    duets = [{"duet": n, "A": side(100 + n), "B": side(200 + n)} for n in (1, 2, 3)]
    duets.append({"duet": 4, "A": {"memory_by_phase": None}, "B": side(900)})  # kept before
    duets.append({"duet": 5, "A": side(900), "B": {}})  # a side that reported none
    found = costs.by_phase(duets)
    assert found == {"building": (10 * mib, 10 * mib), "compiling": (102 * mib, 202 * mib),
                     "measured rounds": (40 * mib, 40 * mib)}
    case = {"costs": {"duets": duets, "verdicts": {}}}
    assert costs.phase_line(case) == (
        "peak device memory by phase, A -> B (median over duets; * the side's highest): "
        "building 10 -> 10 MiB (1.00x), compiling 102 -> 202 MiB (1.98x)*A*B, "
        "measured rounds 40 -> 40 MiB (1.00x)")
    assert costs.phase_line({"costs": {"duets": [duets[3]]}}) == ""
