"""pytest wiring: options, the case matrix, the fixtures, machine info and the summary.

Only wiring lives here; each job is in the module named for it.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tfperf import matrix, options, report, requirements
from tfperf.baseline import BaselineError, BaselineStore
from tfperf.machine import Machine, detect
from tfperf.measurement import CaseRunner
from tfperf.workload import WorkloadError, WorkloadInfo, discover

MARKERS = {
    "smoke": "in the smoke tier (CPU-sized, minutes)",
    "nightly": "in the nightly tier (GPU runners, every night)",
    "full": "in the full tier only (the whole matrix)",
    "cpu": "runs on CPU devices",
    "gpu": "runs on GPU devices",
}


@dataclass
class PerfSession:
    options: options.PerfOptions
    machine: Machine
    runner: CaseRunner | None = None

    def workloads(self) -> dict[str, WorkloadInfo]:
        return _discover(self.options.workloads_dir)


@cache
def _discover(directory: Path) -> dict[str, WorkloadInfo]:
    try:
        return discover(directory)
    except WorkloadError as error:
        raise pytest.UsageError(str(error)) from None


SESSION = pytest.StashKey[PerfSession]()


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")
    machine = detect()
    parsed = options.parse(config, bool(machine.gpus), lambda d: sorted(_discover(d)))
    config.stash[SESSION] = PerfSession(parsed, machine)


def pytest_sessionstart(session: pytest.Session) -> None:
    perf = session.config.stash[SESSION]
    bench = getattr(session.config, "_benchmarksession", None)
    key = perf.machine.key()
    storage = Path(str(bench.storage)) if bench is not None else session.config.rootpath
    if bench is not None:
        # pytest-benchmark names its storage folder after OS and Python only; ours names the
        # devices and TensorFlow too, so that results of different hardware never mix.
        bench.machine_id = key
        bench.storage.default_machine_id = key
        bench.handle_loading()
    try:
        baselines = BaselineStore(storage / key)
    except BaselineError as error:
        raise pytest.UsageError(str(error)) from None
    log_dir = session.config.rootpath / ".perf-results" / "logs"
    perf.runner = CaseRunner(perf.options, perf.workloads, baselines, log_dir)


def _params(perf: PerfSession) -> Iterator[Any]:
    workloads = perf.workloads()
    for case in matrix.generate(workloads, perf.options.tier, perf.options.only):
        marks: list[Any] = [
            getattr(pytest.mark, case.tier(workloads).label),
            getattr(pytest.mark, case.device_kind),
        ]
        reason = requirements.skip_reason(case, perf.machine)
        if reason:
            marks.append(pytest.mark.skip(reason=reason))
        yield pytest.param(case, id=case.id, marks=marks)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "perf_case" in metafunc.fixturenames:
        metafunc.parametrize("perf_case", list(_params(metafunc.config.stash[SESSION])))


@pytest.fixture
def perf_runner(request: pytest.FixtureRequest) -> CaseRunner:
    runner = request.config.stash[SESSION].runner
    assert runner is not None
    return runner


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report: pytest.TestReport = yield
    perf = item.config.stash[SESSION]
    callspec = getattr(item, "callspec", None)
    if report.when == "call" and report.passed and callspec and perf.runner:
        record = perf.runner.record_for(callspec.params.get("perf_case"))
        if record is not None and record.comparison is not None:
            report.user_properties.append(("tfperf_baseline", record.comparison.status))
    return report


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config
                             ) -> tuple[str, str, str] | None:
    # A case that ran well but had nothing to compare with is not a pass: say so.
    if ("tfperf_baseline", "no baseline") in report.user_properties:
        return "no_baseline", "N", "NO BASELINE"
    return None


def pytest_benchmark_update_machine_info(config: pytest.Config, machine_info: dict[str, Any]
                                         ) -> None:
    perf = config.stash[SESSION]
    machine = perf.machine
    machine_info["tfperf"] = {
        "key": machine.key(),
        "tensorflow": machine.tensorflow,
        "cpu_model": machine.cpu_model,
        "cpu_cores": machine.cpu_cores,
        "gpus": [{"name": g.name, "memory_bytes": g.memory_bytes, "uuid": g.uuid}
                 for g in machine.gpus],
        "gpu_unavailable_reason": machine.gpu_unavailable_reason,
        "tier": perf.options.tier.label,
    }


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config
                            ) -> None:
    perf = config.stash.get(SESSION, None)
    if perf is None or perf.runner is None or not perf.runner.records:
        return
    terminalreporter.section(
        f"tfperf: {perf.options.tier.label} tier on {perf.machine.key()}")
    for line in report.table(perf.runner.records):
        terminalreporter.write_line(line)
