"""Why a case failed, in words a person reads first: the cause, then the detail."""

from __future__ import annotations

from tfperf.ground.vocabulary import CAUSE, COSTS_MORE, ERROR, NUMERICS_DIFFER, SLOWER
from tfperf.ground.vocabulary import CAUSES as CAUSES
from tfperf.ground.vocabulary import Cause as Cause


def cause_of(text: str) -> Cause:
    """A cause read from outside the process (a worker's message, a kept file): `error` where
    it names none of the causes."""
    return CAUSE.get(text) or ERROR


# Failures that are an A/B comparison's findings, not errors: the case ran to its verdicts, so
# its speed verdict stands beside them (a bisection follows speed through a costlier commit).
AB_FINDINGS: frozenset[Cause] = frozenset({SLOWER, NUMERICS_DIFFER, COSTS_MORE})


# How faulthandler's report of a crash begins (a worker's log holds one when it crashed).
CRASH_STACK = "Fatal Python error:"


class CaseFailure(Exception):
    def __init__(self, cause: Cause, message: str, log_tail: str = "", phase: str = "",
                 log_path: str = "") -> None:
        assert cause in CAUSES, cause
        super().__init__(f"{cause}: {message}")
        self.cause = cause
        self.message = message
        self.log_tail = log_tail
        self.phase = phase  # what the worker was doing (starting, warming up, measuring...)
        self.log_path = log_path

    def __str__(self) -> str:
        text = f"{self.cause}: {self.message}"
        if CRASH_STACK in self.log_tail:
            # The log's folder may be gone by the time anyone reads this (a self-test's is):
            # the stack travels here (tfperf.processes.crash_stack trims it).
            text += ("\n--- the worker's log: its last lines, then the stack faulthandler wrote "
                     f"as it crashed (the crashing and main threads) ---\n{self.log_tail}")
        elif self.log_tail:
            text += f"\n--- last lines of the worker's log ---\n{self.log_tail}"
        return text


def in_one_line(error: BaseException) -> str:
    """`Type: first line of the message`: what a report shows where a traceback would bury it."""
    return f"{type(error).__name__}: {(str(error).strip().splitlines() or [''])[0]}"
