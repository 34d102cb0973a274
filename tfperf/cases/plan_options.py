"""The options that shape a session's plan: the nightly selection, a time budget, a plan shown
without running, a runner assumed instead of this one, and a shard of the work."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tfperf.cases import plan
from tfperf.cases.estimate import PlanError, assumed_machine
from tfperf.ground.machine import Machine
from tfperf.ground.tiers import Tier

# The nightly workflow stops after 6 hours; the night's cases get 4 of them.
NIGHTLY_BUDGET = "4h"
SELECTIONS = ("cover", "all")


@dataclass(frozen=True)
class PlanOptions:
    selection: str = "all"  # cover: the nightly selection (tfperf.cases.selection)
    budget_s: float | None = None
    show: bool = False  # print the plan and run nothing
    assumed: Machine | None = None  # the runner planned for, when not this machine
    shard: tuple[int, int] | None = None  # (I, N): this runner's share

    @property
    def active(self) -> bool:
        """Whether the session plans at all (the smoke tier, by default, does not)."""
        return self.selection == "cover" or self.budget_s is not None or self.show \
            or self.shard is not None


def add(group: Any) -> None:
    group.addoption("--perf-selection", metavar="cover|all",
                    help="The nightly tier's cases: cover (default: every workload's default "
                         "case on every device count, and every pair of interacting axis values, "
                         "within the budget) or all (the whole product).")
    group.addoption("--perf-budget", metavar="DURATION",
                    help=f"Time for the session's cases, e.g. 4h, 90m or none (default: "
                         f"{NIGHTLY_BUDGET} for the nightly selection, none otherwise). Cases that do "
                         "not fit are left out, lowest priority first; once spent, no case starts.")
    group.addoption("--perf-plan", action="store_true", default=False,
                    help="Print the plan (cases, pair coverage, estimated time) and run nothing.")
    group.addoption("--perf-assume-devices", metavar="NxMODEL",
                    help="Plan for a runner with these GPUs instead of this machine, e.g. 8xH100 "
                         "(with --perf-plan only).")
    group.addoption("--perf-shard", metavar="I/N",
                    help="Run runner I's share of N, balanced by estimated time.")


def parse(get: Callable[[str], Any], tier: Tier, machine: Machine) -> PlanOptions:
    """Raises ValueError (a PlanError) with one line on a bad value."""
    selection = get("perf_selection") or ("cover" if tier is Tier.NIGHTLY else "all")
    if selection not in SELECTIONS:
        raise PlanError(f"--perf-selection: no selection {selection!r}; valid: "
                        f"{', '.join(SELECTIONS)}")
    # The nightly selection is made to fit a night; the whole product is not.
    budget = get("perf_budget") or (NIGHTLY_BUDGET if selection == "cover" else "none")
    assumed = get("perf_assume_devices")
    if assumed and not get("perf_plan"):
        raise PlanError("--perf-assume-devices plans for another runner: add --perf-plan (it "
                        "cannot run cases on GPUs this machine does not have)")
    return PlanOptions(
        selection=selection, budget_s=plan.parse_budget(budget), show=bool(get("perf_plan")),
        assumed=assumed_machine(machine, assumed) if assumed else None,
        shard=plan.parse_shard(get("perf_shard")) if get("perf_shard") else None)
