"""A session's sides: the environment of the TensorFlow under test (side B, and the only side
outside an A/B session) and of the A/B baseline (side A), built once (cached) and probed
before any case runs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from tfperf.ab.case import ABRunner, SideSetup
from tfperf.cases.options import PerfOptions
from tfperf.gate import history
from tfperf.ground.machine import Machine
from tfperf.processes import environments
from tfperf.processes.runtime import CURRENT, Runtime
from tfperf.workload import WorkloadInfo

Workloads = Callable[[], dict[str, WorkloadInfo]]


def prepare(options: PerfOptions, machine: Machine, log_dir: Path, results_dir: Path,
            discover: Callable[[Path], dict[str, WorkloadInfo]], workloads: Workloads,
            config: pytest.Config) -> tuple[Runtime, Machine, ABRunner | None]:
    """Side B's runtime, the machine as the session keys its results (its TensorFlow's
    version), and the A/B runner if there is a baseline. A UsageError, one line naming the
    option, if a spec cannot be installed or its TensorFlow imported."""
    ab = options.ab
    if config.option.collectonly:
        return CURRENT, machine, None  # a listing (or a plan) runs nothing: nothing to build
    say = config.pluginmanager.get_plugin("terminalreporter")
    wanted: list[tuple[str, str, dict[str, str]]] = [("--perf-tensorflow", ab.tensorflow, {})]
    if ab.baseline is not None:
        wanted.append(("--perf-baseline", ab.baseline, ab.baseline_env))
    runtimes = []
    for option, spec, env in wanted:
        if say is not None and spec != "current":
            say.write_line(f"tfperf: worker environment for {option}={spec} (built once, "
                           f"cached in {options.cache_dir / 'environments'})")
        try:
            runtime = environments.prepare(spec, env, options.cache_dir,
                                           log_dir / "environments.log")
        except environments.SpecError as error:
            raise pytest.UsageError(f"{option}={spec}: {error}") from None
        runtimes.append(replace(runtime, tensorflow=runtime.tensorflow or machine.tensorflow))
    under_test = runtimes[0]
    # Each TensorFlow keeps its own history and baselines: the machine key names its version.
    machine = replace(machine, tensorflow=under_test.tensorflow)
    if ab.baseline is None:
        return under_test, machine, None
    folder = ab.baseline_workloads or options.workloads_dir
    try:
        discover(folder)  # read now: a folder that cannot be read stops the session here
    except pytest.UsageError as error:
        raise pytest.UsageError(f"--perf-baseline-workloads: {error}") from None
    setups = {"A": SideSetup(runtimes[1], lambda: discover(folder), folder),
              "B": SideSetup(under_test, workloads, options.workloads_dir)}
    return under_test, machine, ABRunner(options, setups, machine, log_dir, results_dir,
                                         history.session_id())
