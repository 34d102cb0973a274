"""What a session says while it runs: a line per case (i of N, the time spent, the planned
cases' estimated time left, against --perf-budget) and, within a case, what it has so far (an
A/B case's pairs and current interval). On a terminal rich redraws one live line; elsewhere
(CI logs) each is a plain line of its own."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import IO, Protocol, cast

from rich.console import Console
from rich.live import Live
from rich.text import Text


class Out(Protocol):
    """Where the lines go: pytest's terminal, past its capture of the test's output."""

    def write(self, text: str) -> object: ...

    def flush(self) -> object: ...


def duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}h{rest // 60:02d}m" if hours else f"{rest // 60}m{rest % 60:02d}s"


class Progress:
    def __init__(self, total: int, estimates: Mapping[str, float], budget_s: float | None,
                 out: Out, live: bool, clock: Callable[[], float] = time.monotonic,
                 width: int | None = None) -> None:
        self.total = total
        self.estimates = dict(estimates)  # case id -> planned seconds
        self.budget_s = budget_s
        self.clock = clock
        self.started = clock()
        self.number = 0
        self.case = ""
        self.case_started = self.started
        self.out = out
        self.live: Live | None = None
        # `width`: the terminal's, which rich cannot ask a file that is not one.
        self.console = Console(file=cast(IO[str], out), force_terminal=True,
                               width=width) if live else None

    def line(self, detail: str = "") -> str:
        now = self.clock()
        spent = now - self.started
        parts = [f"tfperf: case {self.number} of {self.total}", self.case,
                 f"{duration(now - self.case_started)} in this case, {duration(spent)} in all"]
        left = sum(self.estimates.values()) - max(0.0, min(
            now - self.case_started, self.estimates.get(self.case, 0.0)))
        if self.estimates:
            parts.append(f"about {duration(left)} of planned cases left")
        if self.budget_s is not None:
            parts.append(f"budget {duration(self.budget_s)}, {duration(self.budget_s - spent)} "
                         "of it left")
        return " | ".join(parts + ([detail] if detail else []))

    def start(self, case_id: str) -> None:
        self.number += 1
        self.case = case_id
        self.case_started = self.clock()
        if self.console is not None:
            self.out.write("\n")  # below pytest's line of outcomes, not over it
            self.live = Live(Text(self.line()), console=self.console, transient=True,
                             auto_refresh=False)
            self.live.start(refresh=True)
        else:
            self._plain(self.line())

    def say(self, detail: str) -> None:
        """What the running case has so far."""
        if self.live is not None:
            self.live.update(Text(self.line(detail)), refresh=True)
        else:
            self._plain(self.line(detail))

    def end(self) -> None:
        self.estimates.pop(self.case, None)
        if self.live is not None:
            self.live.stop()
            self.live = None

    def _plain(self, text: str) -> None:
        self.out.write(f"\n{text}\n")
        self.out.flush()
