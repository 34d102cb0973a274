"""A session of the suite: its options, machine, runtimes and runner, and what it sets up
before its first case. The plugin (tfperf.plugin) keeps one in pytest's stash."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tfperf.ab import sides
from tfperf.cases import catalog, requirements
from tfperf.equivalence.check import EquivalenceCheck
from tfperf.gate import rules as gate_rules
from tfperf.gate.case_verdict import Sources
from tfperf.ground.machine import Machine
from tfperf.ground.project import LAYOUT, Project
from tfperf.measure.case_runner import CaseRunner
from tfperf.measure.progress import Progress
from tfperf.measure.runner_protocol import Runner
from tfperf.options.perf import PerfOptions
from tfperf.plan.session_plan import SessionPlan
from tfperf.processes import session_runtimes
from tfperf.processes.environments import SpecError
from tfperf.processes.runtime import CURRENT, Runtime
from tfperf.storage import session_files
from tfperf.storage.errors import StorageError, StoreUnavailable
from tfperf.storage.results_store import ResultsStore
from tfperf.storage.stored_runs import StoredRuns
from tfperf.workload import WorkloadError, WorkloadInfo


@dataclass
class PerfSession:
    options: PerfOptions
    machine: Machine
    log_dir: Path
    layout: Project
    runner: Runner | None = None  # the single-case runner, or an A/B session's
    equivalence: EquivalenceCheck | None = None
    # A workloads folder that cannot be read, found while collecting (see generate_tests).
    collection_error: str | None = None
    plan: SessionPlan | None = None
    runtime: Runtime = CURRENT  # where the workers run: the TensorFlow under test
    store: ResultsStore | None = None  # opened when first needed (a plan or the first case)
    progress: Progress | None = None  # the line per case while the session runs
    session_id: str = field(default_factory=session_files.session_id)

    def workloads(self) -> dict[str, WorkloadInfo]:
        return discover(self.options.workloads_dir, self.log_dir)

    def results_store(self) -> ResultsStore:
        """The store, reached and its schema brought forward; a UsageError, one line, if it
        cannot be: before any case runs."""
        if self.store is None:
            try:
                self.store = ResultsStore.open(self.options.store_url)
            except StoreUnavailable as error:
                raise pytest.UsageError(str(error)) from None
        return self.store

    def stored_runs(self) -> StoredRuns:
        """This machine's history in the store, without this session's own runs."""
        return StoredRuns(self.results_store(), self.machine.key(), self.session_id)


@cache
def discover(directory: Path, log_dir: Path) -> dict[str, WorkloadInfo]:
    try:
        return catalog.read(directory, log_dir / "catalog.log")
    except WorkloadError as error:
        raise pytest.UsageError(str(error)) from None


# pytest-benchmark's own default storage: a session that did not name one stores in the
# project's baselines folder instead (tfperf.plugin), which every command reads.
BENCHMARK_DEFAULT_STORAGE = "file://./.benchmarks"


def baselines_dir(config: pytest.Config, layout: Project) -> Path:
    """The project's baselines folder, which must be pytest-benchmark's storage folder too: a
    UsageError, one line, if they differ."""
    bench = getattr(config, "_benchmarksession", None)
    if bench is None:
        return layout.baselines
    storage = Path(str(bench.storage))
    if storage.resolve() != layout.baselines.resolve():
        raise pytest.UsageError(
            f"pytest-benchmark stores in {storage} (--benchmark-storage) but the project's "
            f"baselines are {layout.baselines} ({LAYOUT}): make them one folder")
    return layout.baselines


def prepare_runtimes(config: pytest.Config, perf: PerfSession) -> None:
    """The TensorFlow under test (and side A's) built and probed; the machine keyed by its
    version, so each TensorFlow keeps its own history and baselines; the A/B runner if any.
    A listing (or a plan) runs nothing, so builds nothing."""
    if config.option.collectonly:
        return
    ab = perf.options.ab
    say = config.pluginmanager.get_plugin("terminalreporter")
    try:
        runtimes = session_runtimes.prepare(
            perf.options.tensorflow, (ab.side_a, ab.side_a_env) if ab.side_a else None,
            perf.machine.tensorflow, perf.options.cache_dir, perf.log_dir / "environments.log",
            say.write_line if say is not None else lambda _: None,
            perf.options.hold_environments)
    except SpecError as error:
        raise pytest.UsageError(str(error)) from None
    perf.runtime = runtimes.under_test
    perf.machine = replace(perf.machine, tensorflow=runtimes.under_test.tensorflow)
    if runtimes.side_a is not None:
        perf.runner = sides.runner(
            perf.options.compare, runtimes.side_a, ab.side_a_workloads, runtimes.under_test,
            perf.options.workloads_dir, perf.machine, perf.log_dir, perf.layout.results,
            lambda folder: discover(folder, perf.log_dir), perf.workloads, perf.session_id)


class _Terminal:
    """pytest's terminal, written to past its capture of the test's output (as pytest's own
    live logging does), so that a case's progress shows while it runs."""

    def __init__(self, config: pytest.Config, reporter: Any) -> None:
        self.reporter = reporter
        self.capture = config.pluginmanager.get_plugin("capturemanager")

    def write(self, text: str) -> None:
        if self.capture is None:
            self.reporter.write(text)
            return
        with self.capture.global_and_fixture_disabled():
            self.reporter.write(text)

    def flush(self) -> None:
        self.reporter.flush()


def _progress(session: pytest.Session, perf: PerfSession) -> Progress | None:
    """A line per case on the terminal (none under -q -q or without a terminal reporter)."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or session.config.get_verbosity() < -1:
        return None
    plan = perf.plan
    cases = [item.callspec.params["perf_case"] for item in session.items  # type: ignore[attr-defined]
             if "perf_case" in getattr(getattr(item, "callspec", None), "params", {})]
    # The cases that will run: those this machine cannot run are skipped before they start.
    total = len(plan.run) if plan is not None else sum(
        requirements.skip_reason(case, perf.machine) is None for case in cases)
    estimates = {case.id: s for case, s in plan.seconds.items()} if plan is not None else {}
    return Progress(total, estimates, perf.options.plan.budget_s,
                    _Terminal(session.config, reporter), live=bool(reporter.isatty),
                    width=session.config.get_terminal_writer().fullwidth)


def start(session: pytest.Session, perf: PerfSession) -> None:
    """What a session that runs the suite needs before its first case: the sides' TensorFlow,
    pytest-benchmark's storage keyed by this machine, the gate's rules, baselines and history,
    the case runner. Another repository's own tests collect no case and change none of it."""
    prepare_runtimes(session.config, perf)
    bench = getattr(session.config, "_benchmarksession", None)
    key = perf.machine.key()
    if bench is not None:
        # pytest-benchmark names its storage folder after OS and Python only; ours names the
        # devices and TensorFlow too, so that results of different hardware never mix.
        bench.machine_id = key
        bench.storage.default_machine_id = key
        bench.handle_loading()
    baselines = baselines_dir(session.config, perf.layout)
    try:
        rules = gate_rules.load(baselines)
        sources = Sources.load(baselines, key, perf.stored_runs())
    except (StorageError, gate_rules.RulesError) as error:
        raise pytest.UsageError(str(error)) from None
    perf.progress = _progress(session, perf)
    if perf.runner is not None:
        perf.runner.keep_in(perf.results_store())
        if perf.progress is not None:
            perf.runner.watch(perf.progress.say)
        return  # an A/B session judges by its pairs, not by history
    runner = perf.runner = CaseRunner(perf.options.measure, perf.workloads, perf.machine, sources, rules,
                                      perf.log_dir, perf.session_id, perf.runtime,
                                      perf.layout.reports)
    runner.keep_in(perf.results_store())
    if perf.options.plan.budget_s is not None:
        runner.deadline = time.monotonic() + perf.options.plan.budget_s
