"""Measure one case: its worker runs under pytest-benchmark's fixture, then the numbers are
recorded and judged. Always report, then fail: extra_info is complete before any failure."""

from __future__ import annotations

import datetime
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tfperf.cases import xla_modes
from tfperf.cases.matrix import Case
from tfperf.gate import case_verdict, summary_and_trends
from tfperf.gate.case_verdict import Sources
from tfperf.gate.rules import GateRules
from tfperf.ground.failures import CaseFailure
from tfperf.ground.machine import Machine
from tfperf.ground.vocabulary import LOSS_NOT_FALLING
from tfperf.measure import (
    figures,
    gpu_telemetry,
    kept_run,
    sanity,
    scaling,
    summary_table,
    training_checks,
)
from tfperf.measure.case_record import CaseRecord
from tfperf.measure.figures import Measured
from tfperf.measure.worker_spec import injected_fraction, worker_spec
from tfperf.measure.yardstick_bursts import Bursts
from tfperf.options.consumers import MeasureOptions, names_case
from tfperf.processes.launcher import launch
from tfperf.processes.protocol import WorkerSpec
from tfperf.processes.runtime import CURRENT, Runtime
from tfperf.storage import session_export, session_files, stored_runs
from tfperf.storage.results_store import FailureRow, ResultsStore
from tfperf.workload import WorkloadInfo

# Runs the measured rounds: called with one_round and the yardstick to time before each.
Drive = Callable[[Callable[[], None], Callable[[], None]], None]


class CaseRunner:
    def __init__(self, options: MeasureOptions, workloads: Callable[[], dict[str, WorkloadInfo]],
                 machine: Machine, sources: Sources, rules: GateRules, log_dir: Path,
                 session: str, runtime: Runtime = CURRENT,
                 reports_dir: Path = Path(".perf-results/reports")) -> None:
        self.runtime = runtime  # where the workers run: the TensorFlow under test
        self.gpu_memory_bytes = machine.gpus[0].memory_bytes if machine.gpus else 0
        self.options = options
        self.workloads = workloads
        self.machine = machine
        self.sources = sources
        self.rules = rules
        self.log_dir = log_dir
        self.session = session
        self.build: dict[str, Any] | None = None  # what the first worker's TensorFlow was built as
        self.records: list[CaseRecord] = []
        self.measured: dict[Case, float] = {}  # examples/s of the cases run so far
        self.deadline: float | None = None  # time.monotonic() when the session's budget is spent
        self.reports_dir = reports_dir
        self.history_file: Path | None = None  # the session's kept runs, once there are any
        self.report_lines: list[str] = []  # where the gate's reports were written
        self.keeper: stored_runs.Keeper | None = None  # writes each case to the results store
        self.failures: list[FailureRow] = []  # the cases that failed before the gate judged

    def keep_in(self, store: ResultsStore) -> None:
        self.keeper = stored_runs.Keeper.of(store, self.session, "measured", self.options.tier.label,
                                            self.machine.key())

    def watch(self, say: Callable[[str], None]) -> None:
        """A measured case has nothing to say until it ends: pytest-benchmark times its rounds."""

    def record_for(self, case: Case | None) -> CaseRecord | None:
        return next((record for record in reversed(self.records) if record.case == case), None)

    def _measure(self, case: Case, spec: WorkerSpec, drive: Drive,
                 log_name: str, profile_to: Path | None = None) -> Measured:
        """Start the case's worker (or cluster), warm it up, let `drive` call one_round for each
        measured round (a yardstick before it), then profile one more round into `profile_to`."""
        round_s: list[float] = []
        losses: list[float] = []
        env = xla_modes.case_environment(case, dict(os.environ))
        started = time.monotonic()
        with launch(spec, env, self.options.timeout_s, self.log_dir / log_name,
                    self.options.worker.cluster, self.runtime) as worker:
            ready = worker.wait_ready()
            self.build = self.build or ready.get("build")
            warm = ready["warm_round_s"] or [ready["first_round_s"]]
            inject = injected_fraction(self.options.worker, case) * float(np.median(warm))

            def one_round() -> None:
                message = worker.run_round(inject)
                round_s.append(message["seconds"])
                losses.append(message["loss"])

            fault = self.options.worker.faults.yardstick
            bursts = Bursts(lambda number: worker.yardstick(
                fault.repeat(case.id, number) if fault else 1), self.options.yardstick_every)

            def rounds_between_bursts() -> None:
                drive(one_round, bursts.before_round)
                # One more burst after the last round: each round is rated against the bursts
                # on both sides of it (figures.beside_rounds).
                bursts.after_last()

            telemetry = gpu_telemetry.around(case.device_kind, env, rounds_between_bursts)
            if profile_to is not None:
                worker.profile(profile_to)
            finished = worker.finish()
        return Measured(ready, finished, round_s, bursts.rates, losses, telemetry, profile_to,
                        time.monotonic() - started, bursts.cpu_shares)

    def _profile_path(self, case: Case, suffix: str = "") -> Path:
        return self.options.profile_dir / self.session / f"{case.id}{suffix}"

    def _profiled(self, case: Case) -> bool:
        return names_case(self.options.profile, case.id)

    def run(self, case: Case, request: pytest.FixtureRequest) -> None:
        self.measure(case, request.getfixturevalue("benchmark"))

    def reported(self, item: pytest.Item, report: pytest.TestReport) -> None:
        callspec = getattr(item, "callspec", None)
        case = callspec.params.get("perf_case") if callspec is not None else None
        record = self.record_for(case) if report.when == "call" else None
        if report.failed:  # every phase of every item: a case's setup, its call, the XLA check
            self.failures += stored_runs.failed_case(
                self.keeper, case.id if isinstance(case, Case) else item.name,
                record.failure if record else None, bool(record and record.gate),
                report.longreprtext)
        if report.passed and record is not None and record.gate is not None:
            report.user_properties.append(("tfperf_gate", record.gate.status))
        if report.when == "call" or report.failed:
            self.history_file = self.keep_runs() or self.history_file
        if report.when != "call" or callspec is None:
            return
        bench = getattr(item.config, "_benchmarksession", None)
        if bench is not None and not bench.json:
            # A session that measured leaves the JSON that `pytest-benchmark compare` reads.
            bench.json = self.reports_dir / "benchmark.json"
            bench.json.parent.mkdir(parents=True, exist_ok=True)

    def where_next(self, failure: CaseFailure) -> list[str]:
        found = [r for r in self.records if r.failure is failure]
        return found[0].where_next(self.options.history_dir, self.reports_dir) if found else []

    def finish(self, reports_dir: Path) -> None:
        # A yardstick is judged against the session's other cases only once all have run.
        sanity.flag_between_cases([r.extra_info for r in self.records])
        self.history_file = self.keep_runs(refresh=True) or self.history_file
        failed = {f.case_id for f in self.failures}
        gates = [r.gate for r in self.records if r.gate is not None and r.case.id not in failed]
        if gates or self.failures:
            self.report_lines = summary_and_trends.write_reports(gates, reports_dir, self._title(),
                                                                 self.failures)

    def sections(self) -> list[tuple[str, list[str]]]:
        if not self.records:
            return []
        kept = [f"runs kept in {self.history_file}"] if self.history_file else []
        return [(f"tfperf: {self._title()}",
                 [*summary_table.table(self.records), *self.report_lines, *kept])]

    def machine_info(self) -> dict[str, Any] | None:
        return {**self.machine.benchmark_info(self.build), "tier": self.options.tier.label}

    def _title(self) -> str:
        return f"{self.options.tier.label} tier on {self.machine.key()}"

    def measure(self, case: Case, benchmark: Any) -> CaseRecord:
        if self.deadline is not None and time.monotonic() > self.deadline:
            # What ran is kept and reported; what has not started does not start.
            pytest.skip("the session's --perf-budget is spent: no new case starts")
        record = CaseRecord(case)
        self.records.append(record)
        spec = worker_spec(self.options.worker, case, self.workloads()[case.workload],
                           self.gpu_memory_bytes)
        info = record.extra_info
        info.update(case_id=case.id, **case.axis_values(), virtual=case.virtual,
                    batch_size=spec.batch_size,
                    steps_per_round=spec.steps_per_round, size=spec.size,
                    yardstick_every=self.options.yardstick_every)
        benchmark.extra_info.update(info)
        try:
            measured = self._measure(
                case, spec,
                # pytest-benchmark calls setup before each round, outside the round's timing.
                lambda one, yardstick: benchmark.pedantic(
                    one, setup=yardstick, rounds=self.options.rounds, iterations=1),
                f"{case.id}.log", self._profile_path(case) if self._profiled(case) else None)
        except CaseFailure as failure:
            record.failure = failure
            info.update(failure=failure.cause, failure_message=failure.message)
            benchmark.extra_info.update(info)
            raise
        info["gpu_telemetry"] = measured.telemetry
        if measured.profile is not None:
            info["profile"] = str(measured.profile)
        info.update(figures.figures(spec, measured, benchmark))
        info.update(self._scaling(case, info["examples_per_sec"]))
        benchmark.extra_info.update(info)
        self._judge(record, spec, measured, benchmark)
        return record

    def keep_runs(self, refresh: bool = False) -> Path | None:
        """Write every finished case to the store, then the session's history file from it
        (atomically): the file is the store's export of the session (session_export.py)."""
        runs = [r.run for r in self.records if r.run is not None]
        if self.keeper is None or (not runs and not self.failures):
            return None  # no store: a session opens one before its first case (keep_in)
        return session_export.keep(self.keeper, session_files.History(self.options.history_dir),
                                   self.options.tier.label, runs,
                                   {r.case.id: r.extra_info for r in self.records}, self.failures,
                                   refresh)

    def _run_of(self, case: Case, spec: WorkerSpec, measured: Measured,
                scaling_efficiency: float | None) -> session_files.Run:
        return kept_run.of(case, spec, measured, scaling_efficiency, self.machine,
                           self.workloads()[case.workload].version, self.options.rounds,
                           self.session)

    def _rerun(self, case: Case, spec: WorkerSpec) -> tuple[session_files.Run, Path | None]:
        """A second, independent measurement of a flagged case: a fresh worker. It profiles
        one more round when confirmed regressions are profiled (kept only if confirmed)."""
        def drive(one: Callable[[], None], yardstick: Callable[[], None]) -> None:
            for _ in range(self.options.rounds):
                yardstick()
                one()

        profile_to = self._profile_path(case, ".regression") \
            if self.options.profile_regressions else None
        measured = self._measure(case, spec, drive, f"{case.id}.rerun.log", profile_to)
        run = self._run_of(case, spec, measured, None)
        scaling = self._scaling(case, run.examples_per_sec, remember=False)
        return replace(run, scaling_efficiency=scaling.get("scaling_efficiency")), profile_to

    def _scaling(self, case: Case, examples_per_sec: float, remember: bool = True
                 ) -> dict[str, Any]:
        if remember:
            self.measured[case] = examples_per_sec
        return scaling.efficiency(case, examples_per_sec, self.measured)

    def _judge(self, record: CaseRecord, spec: WorkerSpec, measured: Measured,
               benchmark: Any) -> None:
        info = record.extra_info
        try:
            training_checks.check(info["loss_first"], info["loss_last"],
                                  info["traces"]["during_measurement"],
                                  info["xla_compilations"]["during_measurement"])
            training_checks.sane(info)
        except CaseFailure as failure:
            # Not kept: a run that did not learn, or whose rounds measured tracing or
            # compiling, is not a valid baseline either.
            benchmark.has_error = failure.cause == LOSS_NOT_FALLING
            record.failure = failure
            raise
        run = self._run_of(record.case, spec, measured, info.get("scaling_efficiency"))
        record.run = run
        info["fingerprint"] = run.fingerprint.to_json()
        if not self.options.gating:
            benchmark.extra_info.update(info)
            return
        throttles = gpu_telemetry.throttled(info["gpu_telemetry"])
        if throttles:
            record.gate = case_verdict.not_judged(run, throttles)
            record.run = run.judged(record.gate.status, case_verdict.reason(record.gate), None)
            info["gate"] = case_verdict.extra_info(record.gate, None)
            benchmark.extra_info.update(info)
            return
        settings = self.options.gate
        verdict = case_verdict.assess(run, self.sources, self.rules, settings)
        again = profile = None
        if verdict.flagged and self.options.rerun:
            again, profile = self._rerun(record.case, spec)
        verdict = case_verdict.conclude(verdict, again, self.rules, settings,
                                     datetime.date.today())
        if profile is not None:
            if verdict.failed:
                info["regression_profile"] = str(profile)
                verdict = replace(verdict, profile=str(profile))
            else:  # a slowdown not confirmed needs no diagnosis
                shutil.rmtree(profile, ignore_errors=True)
        record.gate = verdict
        record.run = run.judged(verdict.status, case_verdict.reason(verdict), again)
        info["gate"] = case_verdict.extra_info(verdict, again)
        benchmark.extra_info.update(info)
        if verdict.failed:
            record.failure = CaseFailure("regression", case_verdict.regression_message(verdict))
            raise record.failure


