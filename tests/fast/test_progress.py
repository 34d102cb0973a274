"""The line a session says per case: what it counts, and how it reaches a terminal or a log."""

from __future__ import annotations

import io

from tfperf.measure.progress import Progress, duration


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_each_case_says_its_number_the_time_spent_and_what_is_left_of_the_budget() -> None:
    clock, out = Clock(), io.StringIO()
    progress = Progress(3, {"a": 60.0, "b": 120.0, "c": 30.0}, 600.0, out, live=False,
                        clock=clock)
    progress.start("a")
    clock.now += 45
    progress.say("12 pairs: B/A 0.981 [0.962, 1.001], undecided")
    progress.end()
    progress.start("b")
    lines = [line for line in out.getvalue().splitlines() if line]
    assert lines == [
        "tfperf: case 1 of 3 | a | 0m00s in this case, 0m00s in all | about 3m30s of planned "
        "cases left | budget 10m00s, 10m00s of it left",
        "tfperf: case 1 of 3 | a | 0m45s in this case, 0m45s in all | about 2m45s of planned "
        "cases left | budget 10m00s, 9m15s of it left | 12 pairs: B/A 0.981 [0.962, 1.001], "
        "undecided",
        "tfperf: case 2 of 3 | b | 0m00s in this case, 0m45s in all | about 2m30s of planned "
        "cases left | budget 10m00s, 9m15s of it left"]


def test_a_case_over_its_estimate_leaves_no_negative_time_and_hours_read_as_hours() -> None:
    clock = Clock()
    progress = Progress(1, {"a": 10.0}, None, io.StringIO(), live=False, clock=clock)
    progress.start("a")
    clock.now += 7300
    assert progress.line().endswith("| 2h01m in this case, 2h01m in all | about 0m00s of "
                                    "planned cases left")
    assert duration(-5) == "0m00s"


def test_on_a_terminal_one_live_line_is_redrawn_then_cleared() -> None:
    out = io.StringIO()
    clock = Clock()
    progress = Progress(2, {}, None, out, live=True, clock=clock, width=200)
    progress.start("case-one")
    progress.say("8 pairs: B/A 1.002 [0.990, 1.014], undecided")
    progress.end()
    text = out.getvalue()
    assert "tfperf: case 1 of 2 | case-one" in text
    assert "8 pairs: B/A 1.002" in text
    assert "\x1b[" in text  # drawn with terminal control sequences, and erased at the end
    assert text.rstrip("\n").endswith(("\x1b[2K", "\x1b[?25h"))
