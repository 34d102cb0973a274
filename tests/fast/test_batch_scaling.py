"""benchmarks/batch_scaling.py: its fit and its report, on step times of a known line."""

from __future__ import annotations

import pytest

from tests.helpers import benchmark_scripts

batch_scaling = benchmark_scripts.load("batch_scaling")


def test_the_fit_recovers_the_fixed_part_and_the_part_per_example() -> None:
    steps = {batch: 0.020 + 0.0017 * batch for batch in (32, 64, 128, 256)}
    fixed, per_example = batch_scaling.fit(steps)
    assert fixed == pytest.approx(0.020)
    assert per_example == pytest.approx(0.0017)


def test_the_report_takes_medians_over_sessions_and_removes_the_fixed_part() -> None:
    def session(fixed: float, mfu: float) -> dict[int, dict[str, float]]:
        return {batch: {"step_s": fixed + 0.001 * batch, "mfu": mfu} for batch in (50, 100)}

    lines = batch_scaling.report([session(0.010, 0.40), session(0.050, 0.30),
                                  session(0.030, 0.50)])
    # Median session: fixed 30 ms, step at batch 50 80 ms, MFU 40%; without 30 of 80 ms: 64%.
    assert "batch   50: step    80.0 ms" in lines[1]
    assert "MFU 40.0%, without the fixed part 64.0%" in lines[1]
    assert lines[-1].startswith("fit: 30.0 ms a step fixed + 1.000 ms an example")
    assert "(per session fixed: 10.0, 50.0, 30.0 ms)" in lines[-1]


def test_the_report_gives_no_figure_where_the_fit_puts_the_fixed_part_above_the_step() -> None:
    # Steps that fall with the batch: the fitted fixed part (100 ms) exceeds batch 100's step.
    session = {50: {"step_s": 0.075, "mfu": 0.4}, 100: {"step_s": 0.050, "mfu": 0.5}}
    lines = batch_scaling.report([session])
    assert lines[2].endswith("without the fixed part n/a (fit noisy)")
    assert lines[-1].startswith("fit: 100.0 ms a step fixed")
