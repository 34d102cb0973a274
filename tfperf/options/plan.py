"""The options that shape a session's plan: the nightly selection, a time budget, a plan shown
without running, a runner assumed instead of this one, and a shard of the work."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from tfperf.ground.gpu_models import GPU_MEMORY_BYTES
from tfperf.ground.machine import Gpu, Machine
from tfperf.ground.tiers import Tier

# The nightly workflow stops after 6 hours; the night's cases get 4 of them.
NIGHTLY_BUDGET = "4h"
SELECTIONS = ("cover", "all")
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)([hms])$")
_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0}
_ASSUMED = re.compile(r"^(\d+)x([A-Za-z0-9]+)$")


@dataclass(frozen=True)
class PlanOptions:
    selection: str = "all"  # cover: the nightly selection (tfperf.plan.selection)
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
    """Raises ValueError with one line on a bad value."""
    selection = get("perf_selection") or ("cover" if tier is Tier.NIGHTLY else "all")
    if selection not in SELECTIONS:
        raise ValueError(f"--perf-selection: no selection {selection!r}; valid: "
                        f"{', '.join(SELECTIONS)}")
    # The nightly selection is made to fit a night; the whole product is not.
    budget = get("perf_budget") or (NIGHTLY_BUDGET if selection == "cover" else "none")
    assumed = get("perf_assume_devices")
    if assumed and not get("perf_plan"):
        raise ValueError("--perf-assume-devices plans for another runner: add --perf-plan (it "
                        "cannot run cases on GPUs this machine does not have)")
    return PlanOptions(
        selection=selection, budget_s=parse_budget(budget), show=bool(get("perf_plan")),
        assumed=assumed_machine(machine, assumed) if assumed else None,
        shard=parse_shard(get("perf_shard")) if get("perf_shard") else None)


def parse_budget(text: str) -> float | None:
    """Seconds from `4h`, `90m` or `3600s`; None for `none`."""
    if text.strip().lower() == "none":
        return None
    found = _DURATION.match(text.strip().lower())
    if not found or float(found.group(1)) <= 0:
        raise ValueError(f"--perf-budget: {text!r} is not a duration like 4h, 90m or 3600s "
                         "(or none)")
    return float(found.group(1)) * _UNITS[found.group(2)]


def parse_shard(text: str) -> tuple[int, int]:
    """(index, count) from `I/N`, 1 <= I <= N."""
    found = re.match(r"^(\d+)/(\d+)$", text.strip())
    if not found or not 1 <= int(found.group(1)) <= int(found.group(2)):
        raise ValueError(f"--perf-shard: {text!r} is not I/N with 1 <= I <= N (for example 2/8)")
    return int(found.group(1)), int(found.group(2))


def assumed_machine(machine: Machine, text: str) -> Machine:
    """This machine with the GPUs `text` (for example 8xH100) instead of its own: a plan for a
    runner that is not this one."""
    found = _ASSUMED.match(text.strip())
    models = ", ".join(GPU_MEMORY_BYTES)
    if not found or found.group(2).upper() not in GPU_MEMORY_BYTES \
            or not 1 <= int(found.group(1)) <= 64:
        raise ValueError(f"--perf-assume-devices: {text!r} is not COUNTxMODEL with COUNT 1-64 and "
                         f"MODEL one of {models} (for example 8xH100)")
    model = found.group(2).upper()
    gpus = tuple(Gpu(f"NVIDIA {model} (assumed)", GPU_MEMORY_BYTES[model], f"assumed-{i}")
                 for i in range(int(found.group(1))))
    return replace(machine, gpus=gpus, gpu_unavailable_reason=None, driver="assumed")
