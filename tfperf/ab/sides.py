"""An A/B session's two sides, each a runtime (built by tfperf.processes.session_runtimes) and a
workloads folder, handed to the A/B runner."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tfperf.ab.ab_runner import ABRunner, SideSetup
from tfperf.ground.machine import Machine
from tfperf.ground.vocabulary import SIDE_A, SIDE_B, SideName
from tfperf.options.consumers import CompareOptions
from tfperf.processes.runtime import Runtime
from tfperf.workload import WorkloadInfo

Workloads = Callable[[], dict[str, WorkloadInfo]]


def runner(options: CompareOptions, side_a: Runtime, side_a_workloads: Path | None,
           under_test: Runtime, workloads_dir: Path, machine: Machine, log_dir: Path,
           results_dir: Path, discover: Callable[[Path], dict[str, WorkloadInfo]],
           workloads: Workloads, session: str) -> ABRunner:
    """The A/B runner: side A's runtime and workloads folder (the session's if
    None), side B the session's. A UsageError naming the option if side A's folder cannot be
    read."""
    folder = side_a_workloads or workloads_dir
    try:
        discover(folder)  # read now: a folder that cannot be read stops the session here
    except pytest.UsageError as error:
        raise pytest.UsageError(f"--perf-ab-side-a-workloads: {error}") from None
    setups: dict[SideName, SideSetup] = {SIDE_A: SideSetup(side_a, lambda: discover(folder), folder),
                                         SIDE_B: SideSetup(under_test, workloads, workloads_dir)}
    return ABRunner(options, setups, machine, log_dir, results_dir, session)
