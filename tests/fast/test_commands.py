"""The console scripts share their arguments: a bad percentage, pair count, duration or number
is one line naming the argument and what is valid, before any work, in every command; and
tfperf-bisect reads a run's --perf-* options with pytest's own declarations."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from tfperf.commands import tfperf_ab, tfperf_bisect, tfperf_gate
from tfperf.options import declared


@pytest.mark.parametrize(("main", "args", "line"), [
    (tfperf_gate.main, ["s.json", "--z", "-1"], "argument --z: '-1' is not a number greater than 0"),
    (tfperf_gate.main, ["s.json", "--effect-floor", "0"],
     "argument --effect-floor: '0' is not a percentage above 0 and below 100"),
    (tfperf_gate.main, ["s.json", "--min-history", "x"],
     "argument --min-history: 'x' is not a whole number of at least 1"),
    (tfperf_ab.main, ["s.json", "--floor", "60"],
     "argument --floor: '60' is not a percentage above 0 and below 50"),
    (tfperf_ab.main, ["s.json", "--floor", ""],
     "argument --floor: '' is not a percentage above 0 and below 50"),
    (tfperf_bisect.main, ["specs", "a", "b", "--pairs", "", "--"],
     "argument --pairs: '' is not MIN:MAX with 8 <= MIN <= MAX"),
    (tfperf_bisect.main, ["specs", "a", "b", "--pairs", "4:8", "--"],
     "argument --pairs: '4:8' is not MIN:MAX with 8 <= MIN <= MAX"),
    (tfperf_bisect.main, ["specs", "a", "b", "--budget", "soon", "--"],
     "argument --budget: 'soon' is not a duration like 4h, 90m or 3600s"),
    (tfperf_bisect.main, ["specs", "a", "b", "--", "-k", "resnet20", "--perf-size"],
     "the pytest arguments after --: argument --perf-size: expected one argument"),
    (tfperf_bisect.main, ["specs", "a", "b", "--floor", "1%", "--step-floor", "50"],
     "argument --step-floor: '50' is not a percentage above 0 and below 50"),
    (tfperf_bisect.main, ["specs", "a", "b", "--finding", "speed", "--"],
     "argument --finding: no finding 'speed'; valid: slower, compile, first-step, memory, "
     "host-memory, numerics, configuration"),
    (tfperf_bisect.main, ["specs", "a", "b", "--floor", "60", "--"],
     "--floor: 60% is not a slowdown's floor; give a percentage above 0 and below 50 (above "
     "50 only for a cost)"),
    (tfperf_bisect.main, ["specs", "a", "b", "--finding", "numerics", "--floor", "5", "--"],
     "--floor: a bisection of numerics has no floor (its steps' verdicts are not a ratio); "
     "give it only with slower or a cost"),
])
def test_a_bad_value_is_one_line_in_every_command(
        main: Callable[[Sequence[str]], int], args: list[str], line: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(args)
    assert stopped.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith(line)


@pytest.mark.parametrize("spelling", [["--perf-ab-floor=3"], ["--perf-ab-floor", "3"],
                                      ["--perf-tensorflow", "tensorflow-cpu==2.20.0"]])
def test_bisect_refuses_an_option_each_step_sets_however_it_is_spelled(
        spelling: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        tfperf_bisect.main(["specs", "a", "b", "--", "-k", "resnet20", *spelling])
    assert f"{spelling[0].split('=')[0]} is set by each step" in capsys.readouterr().err


def test_the_options_a_run_gives_are_read_as_pytest_reads_them() -> None:
    args = ["-k", "resnet20 and xla_off", "--perf-size", "tiny", "--perf-only=device_count=1",
            "perf/test_training.py", "--perf-rerun=off"]
    assert sorted(declared.given(args)) == ["--perf-only", "--perf-rerun", "--perf-size"]
    assert declared.given(["-k", "x"]) == []
