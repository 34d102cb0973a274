"""pytest wiring: options, the case matrix, the fixtures, machine info and the summary.

Only wiring lives here; each job is in the module named for it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Generator, Iterator
from typing import Any

import pytest

from tfperf.cases import matrix, requirements, xla_modes
from tfperf.equivalence import hypothesis_profiles
from tfperf.equivalence.arms import ArmWorkers
from tfperf.equivalence.check import EquivalenceCheck
from tfperf.ground import answers, project
from tfperf.ground.machine import detect
from tfperf.ground.vocabulary import FINGERPRINT_DIFFERS, NO_HISTORY
from tfperf.measure.runner_protocol import Runner
from tfperf.options import perf as perf_options
from tfperf.plan import session_plan
from tfperf.processes import scratch, shared_zygotes, warm_start
from tfperf.session import BENCHMARK_DEFAULT_STORAGE, PerfSession, discover, start
from tfperf.storage import session_files
from tfperf.storage.errors import StorageError

SESSION = pytest.StashKey[PerfSession]()


def pytest_addoption(parser: pytest.Parser) -> None:
    perf_options.add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    for name, text in matrix.MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")
    try:
        layout = project.load(config.rootpath)
    except project.ProjectError as error:
        raise pytest.UsageError(str(error)) from None
    if config.getoption("benchmark_storage", None) == BENCHMARK_DEFAULT_STORAGE and (
            layout.declared or layout.tests.is_dir()
            or any(arg.startswith("tfperf.suite") for arg in config.args)):
        # A project of the suite that named no storage keeps its baselines where every
        # command looks (pytest-benchmark's configure runs after this one: trylast).
        config.option.benchmark_storage = f"file://{layout.baselines}"
    machine = detect()
    logs = layout.results / "logs"
    scratch.sweep()  # what sessions killed outright left in the temporary folder
    # Not where a GPU is: that forking after a CUDA build's import leaves CUDA usable in the
    # child is not verified yet (no GPU runner with TensorFlow has run it). Begun before the
    # options are read (naming a workload reads the workloads folder in a worker).
    if machine.tensorflow != "none" and machine.device_count("gpu") == 0:
        # The environment every worker's starts from, before its case's own settings.
        try:
            warm_start.begin(xla_modes.environment("off", dict(os.environ)), logs / "zygote.log")
        except shared_zygotes.FolderError as error:
            raise pytest.UsageError(str(error)) from None
    parsed = perf_options.parse(config, machine, lambda d: sorted(discover(d, logs)), layout.results)
    for notice in parsed.ab.deprecated:
        sys.stderr.write(f"tfperf: {notice}\n")
    if parsed.plan.show:
        config.option.collectonly = True  # a plan runs nothing
    # A plan for another runner sees that runner's devices (and runs nothing).
    try:
        session_id = session_files.session_id()
    except ValueError as error:
        raise pytest.UsageError(str(error)) from None
    config.stash[SESSION] = PerfSession(parsed, parsed.plan.assumed or machine, logs, layout,
                                        session_id=session_id)
    hypothesis_profiles.choose(config, parsed.tier)


def _params(perf: PerfSession) -> Iterator[Any]:
    workloads = perf.workloads()
    for generated in matrix.generate(workloads, perf.options.tier, perf.options.only):
        case = requirements.with_devices(generated, perf.machine, perf.options.virtual_devices)
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
        perf = metafunc.config.stash[SESSION]
        try:
            params = list(_params(perf))
        except pytest.UsageError as error:
            # Raised here, pytest reports a collection error with a traceback: reported as one
            # line once collection ends, before any case runs.
            perf.collection_error = str(error)
            params = []
        metafunc.parametrize("perf_case", params)


SUITE_FIXTURES = ("perf_case", "xla_equivalence")


@pytest.hookimpl(trylast=True)  # after -k and -m have deselected theirs
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    perf = config.stash[SESSION]
    cased = {item: item.callspec.params["perf_case"] for item in items  # type: ignore[attr-defined]
             if "perf_case" in getattr(getattr(item, "callspec", None), "params", {})}
    if not perf.options.plan.active or not cased or perf.collection_error:
        return
    try:
        options = perf.options
        planning = session_plan.Planning(
            options.plan, options.worker, options.rounds, options.tier,
            options.ab.settings if options.ab.side_a else None,
            lambda: perf.stored_runs().all(), options.workloads_dir)
        plan = perf.plan = session_plan.make(list(cased.values()), perf.workloads(),
                                             perf.machine, planning, perf.log_dir)
    except StorageError as error:
        raise pytest.UsageError(str(error)) from None
    for item, case in cased.items():
        if case in plan.left_out:
            item.add_marker(pytest.mark.skip(reason=plan.left_out[case]))
    gone = {item for item, case in cased.items() if case not in plan.run | set(plan.left_out)}
    if gone:
        config.hook.pytest_deselected(items=list(gone))
        items[:] = [item for item in items if item not in gone]


def pytest_report_collectionfinish(config: pytest.Config) -> list[str]:
    plan = config.stash[SESSION].plan
    return list(plan.lines) if plan is not None else []


def pytest_collection_finish(session: pytest.Session) -> None:
    perf = session.config.stash[SESSION]
    if perf.collection_error is not None:
        raise pytest.UsageError(perf.collection_error)
    if any(name in getattr(item, "fixturenames", ()) for item in session.items
           for name in SUITE_FIXTURES):
        start(session, perf)


@pytest.fixture(scope="session")
def xla_equivalence(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
                    ) -> Iterator[EquivalenceCheck]:
    perf = request.config.stash[SESSION]
    arms = ArmWorkers(tmp_path_factory.mktemp("xla-arms"), perf.log_dir, perf.options.timeout_s,
                     bool(perf.machine.gpus), perf.runtime)
    perf.equivalence = EquivalenceCheck.for_session(
        arms, perf.workloads(), perf.options.only, perf.options.faults.xla,
        perf.options.xla_example, perf.machine.cpu_avx512)
    if (why := perf.equivalence.nothing_to_draw()) is not None:
        arms.close()
        pytest.skip(why)
    try:
        yield perf.equivalence
    finally:
        arms.close()


@pytest.fixture
def perf_runner(request: pytest.FixtureRequest) -> Runner:
    runner = request.config.stash[SESSION].runner
    assert runner is not None
    return runner


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """The case's progress line while it runs."""
    progress = item.config.stash[SESSION].progress
    callspec = getattr(item, "callspec", None)
    case = callspec.params.get("perf_case") if callspec is not None else None
    if progress is None or case is None:
        return (yield)
    progress.start(case.id)
    try:
        return (yield)
    finally:
        progress.end()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report: pytest.TestReport = yield
    runner = item.config.stash[SESSION].runner
    if runner is not None:
        callspec = getattr(item, "callspec", None)
        failure = answers.answered(call.excinfo.value if call.excinfo else None,
                                   callspec is not None and "perf_case" in callspec.params)
        if report.failed and failure is not None:
            # A case's answer, not a crash of the harness: its message and where to look next.
            report.longrepr = answers.shown(failure, runner.where_next(failure))
        runner.reported(item, report)
    return report


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config
                             ) -> tuple[str, str, str] | None:
    # A case that ran well but had nothing to compare with is not a pass: say so.
    statuses = {value for name, value in getattr(report, "user_properties", ())
                if name == "tfperf_gate"}
    if statuses & {NO_HISTORY, FINGERPRINT_DIFFERS}:
        return "no_baseline", "N", "NO BASELINE"
    return None


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> Generator[None]:
    """Keep every case of the session, then write the reports: before pytest-benchmark writes
    its JSON, so that what only the whole session can say of a case (a yardstick far from the
    other cases') is in the case's extra_info there too."""
    perf = session.config.stash.get(SESSION, None)
    if perf is not None and perf.runner is not None:
        perf.runner.finish(perf.layout.reports)
    yield


def pytest_unconfigure(config: pytest.Config) -> None:
    # Last, after every fixture's teardown: the equivalence arms are the zygote's children.
    warm_start.end()


def pytest_benchmark_update_machine_info(config: pytest.Config, machine_info: dict[str, Any]
                                         ) -> None:
    runner = config.stash[SESSION].runner
    info = runner.machine_info() if runner is not None else None
    if info is not None:  # else not the suite's session: another project's benchmarks
        machine_info["tfperf"] = info


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config
                            ) -> None:
    perf = config.stash.get(SESSION, None)
    if perf is None:
        return
    sections = []
    if perf.equivalence is not None and perf.equivalence.examples_run:
        sections.append(("tfperf: XLA equivalence", perf.equivalence.summary()))
    if perf.runner is not None:
        sections.extend(perf.runner.sections())
    for title, lines in sections:
        terminalreporter.section(title)
        for line in lines:
            terminalreporter.write_line(line)
