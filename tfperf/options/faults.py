"""Test-only options: faults and injections that prove a check works (the gate's slowdown, the
steady-state check's retrace, the figures' disturbed yardstick, the A/B cost and numerics verdicts)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tfperf.numerics.compare import FAULTS as XLA_FAULTS
from tfperf.options.consumers import CostInjection, Faults, Injection, YardstickFault
from tfperf.options.values import one_of, positive_float


def add(group: pytest.OptionGroup) -> None:
    group.addoption("--perf-inject-slowdown", metavar="FRACTION[@TEXT]",
                    help="For testing the gate only: add this fraction of a round's time to "
                         "every measured round of the cases whose id contains TEXT.")
    group.addoption("--perf-retrace-fault", metavar="TEXT",
                    help="For testing the steady-state check only: make the step of the cases "
                         "whose id contains TEXT trace again in their second measured round.")
    group.addoption("--perf-yardstick-fault", metavar="FACTOR[/EVERY][@TEXT]",
                    help="For testing the figures' sanity checks only: every EVERY-th (default "
                         "every) yardstick burst of the cases whose id contains TEXT does FACTOR "
                         "bursts' work and reports one's, as a disturbed burst reads.")
    group.addoption("--perf-inject-cost", metavar="compile=SECONDS|memory=MIB", action="append",
                    default=[],
                    help="For testing the cost verdicts only: the workers (in an A/B session, "
                         "side B's) burn SECONDS more CPU in their first round, or hold MIB "
                         "more on the device.")
    group.addoption("--perf-inject-numerics", metavar="TOLERANCES",
                    help="For testing the A/B numerics verdict only: side B's numerics arm "
                         "multiplies its loss by 1 + this many of the case's loss tolerances.")


def yardstick_fault(text: str) -> YardstickFault:
    spec, _, pattern = text.partition("@")
    factor, _, every = spec.partition("/")
    every = every or "1"
    if not (factor.isdigit() and int(factor) >= 2 and every.isdigit() and int(every) >= 1):
        raise ValueError(f"--perf-yardstick-fault: {text!r} is not FACTOR[/EVERY][@TEXT] with "
                         "a whole FACTOR of 2 or more and a whole EVERY of 1 or more, e.g. "
                         "3/2@resnet20")
    return YardstickFault(int(factor), int(every), pattern)


def cost_injection(texts: list[str]) -> CostInjection | None:
    given: dict[str, float] = {}
    for text in texts:
        kind, _, amount = text.partition("=")
        try:
            value = float(amount)
        except ValueError:
            value = -1.0
        fractional_mib = kind == "memory" and not value.is_integer()
        if kind not in ("compile", "memory") or not value > 0 or fractional_mib:
            raise ValueError(f"--perf-inject-cost: {text!r} is not compile=SECONDS (above 0) "
                             "or memory=MIB (a whole number above 0)")
        given[kind] = value
    if not given:
        return None
    return CostInjection(given.get("compile", 0.0), int(given.get("memory", 0)))


def slowdown(text: str) -> Injection:
    fraction, _, pattern = text.partition("@")
    return Injection(positive_float("--perf-inject-slowdown", fraction), pattern)


def parse(get: Callable[[str], Any]) -> Faults:
    """The faults given; a bad one raises ValueError with one line."""
    return Faults(
        slowdown=slowdown(get("perf_inject_slowdown")) if get("perf_inject_slowdown") else None,
        retrace=get("perf_retrace_fault") or None,
        yardstick=yardstick_fault(get("perf_yardstick_fault"))
        if get("perf_yardstick_fault") else None,
        cost=cost_injection(get("perf_inject_cost")),
        numerics=positive_float("--perf-inject-numerics", get("perf_inject_numerics"))
        if get("perf_inject_numerics") else 0.0,
        xla=one_of("--perf-xla-fault", "fault", get("perf_xla_fault"), XLA_FAULTS)
        if get("perf_xla_fault") else None)
