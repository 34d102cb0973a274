"""Measure one case: its worker runs under pytest-benchmark's fixture, then the numbers are
recorded and judged. Always report, then fail: extra_info is complete before any failure."""

from __future__ import annotations

import contextlib
import datetime
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from tfperf import case_gate, diagnosis, fingerprint, gate, gpu_telemetry, history, xla_modes
from tfperf.case_gate import CaseGate, Sources
from tfperf.failures import CaseFailure
from tfperf.gate_rules import GateRules
from tfperf.gpu_telemetry import Sampler
from tfperf.launcher import launch
from tfperf.machine import Machine
from tfperf.matrix import Case
from tfperf.options import PerfOptions
from tfperf.protocol import WorkerSpec
from tfperf.tiers import MEASUREMENT
from tfperf.workload import WorkloadInfo


@dataclass
class CaseRecord:
    """What the summary table shows for one case."""

    case: Case
    extra_info: dict[str, Any] = field(default_factory=dict)
    gate: CaseGate | None = None
    run: history.Run | None = None  # kept in the session's history file
    failure: CaseFailure | None = None


def worker_env(case: Case, base: dict[str, str]) -> dict[str, str]:
    """The worker's own environment: XLA flags and visible devices are per case."""
    env = xla_modes.environment(case.xla, base)
    if case.device_kind == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = ""  # a CPU case must not touch (or allocate on) a GPU
    else:
        visible = base.get("CUDA_VISIBLE_DEVICES")
        ids = visible.split(",") if visible else [str(i) for i in range(case.device_count)]
        env["CUDA_VISIBLE_DEVICES"] = ",".join(ids[: case.device_count])
    return env


def _percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def _input_figures(spec: WorkerSpec, finished: dict[str, Any], examples_per_sec: float,
                   telemetry: dict[str, Any]) -> dict[str, Any]:
    """What the input pipeline costs: its rate alone, the step's rate without it, and whether
    the case was input-bound, with the evidence."""
    pipeline, step = finished["pipeline_examples_per_sec"], finished["step_examples_per_sec"]
    bound, why = diagnosis.input_bound(spec.case["device_kind"], pipeline, step, telemetry)
    return {
        "input": spec.case["input"],
        "pipeline_examples_per_sec": pipeline,
        "step_examples_per_sec": step,
        "input_bound": bound,
        "input_bound_evidence": why,
        "fraction_of_step_alone": examples_per_sec / step if step else None,
    }


def _examples_per_round(spec: WorkerSpec, ready: dict[str, Any]) -> int:
    # Every replica trains on its own batch; a model-parallel case is one replica.
    return spec.batch_size * int(ready["strategy"]["replicas"]) * spec.steps_per_round


def paired_fraction(work_per_round: float, round_s: list[float], yardstick: list[float],
                    devices: int) -> float:
    """The median over rounds of each round's rate over the rate of the yardstick burst timed
    beside it, for `devices` devices each with that yardstick: what the workload achieved of
    what the device could do at that moment. A rate measured once per session would carry the
    machine's speed swings between it and the rounds into the ratio (see peak)."""
    if len(round_s) != len(yardstick) or not round_s:
        raise ValueError(f"{len(round_s)} rounds and {len(yardstick)} yardstick bursts: "
                         "each round needs its own")
    return float(np.median([work_per_round / s / (rate * devices)
                            for s, rate in zip(round_s, yardstick, strict=True)]))


def yardstick_devices(spec: WorkerSpec) -> int:
    """How many of the devices that a yardstick burst rates the case's replicas have: logical
    devices split from one physical device share it (its cores, its SMs), and the burst, run
    on the first of them, already had all of it."""
    per_worker = 1 if spec.virtual else int(spec.case["device_count"])
    return per_worker * int(spec.case["workers"])


def _yardstick_figures(spec: WorkerSpec, measured: Measured, flops_per_example: float,
                       examples_per_sec: float) -> dict[str, Any]:
    """MFU, or for a memory-bound workload achieved bytes/s against the copy rate; either rated
    round by round against the yardstick timed beside it."""
    ready = measured.ready
    examples_per_round = _examples_per_round(spec, ready)
    devices = yardstick_devices(spec)
    rate = float(np.median(measured.yardstick_rates))
    if "bytes_per_example" in ready:
        per_example = float(ready["bytes_per_example"])
        # A memory-bound workload has no matrix products to rate: judged by bandwidth.
        return {"mfu": None, "yardstick_devices": devices, "bytes_per_example": per_example,
                "bytes_per_sec": per_example * examples_per_sec,
                "copy_bytes_per_sec": rate, "copy_bytes_per_sec_by_round": measured.yardstick_rates,
                "fraction_of_copy_rate": paired_fraction(
                    per_example * examples_per_round, measured.round_s,
                    measured.yardstick_rates, devices)}
    return {"mfu": paired_fraction(flops_per_example * examples_per_round, measured.round_s,
                                   measured.yardstick_rates, devices),
            "yardstick_devices": devices,
            "peak_flops_per_device": rate,
            "peak_flops_per_device_by_round": measured.yardstick_rates}


# Runs the measured rounds: called with one_round and the yardstick to time before each.
Drive = Callable[[Callable[[], None], Callable[[], None]], None]


@dataclass(frozen=True)
class Measured:
    """One measurement of a case by one worker (or cluster)."""

    ready: dict[str, Any]
    finished: dict[str, Any]
    round_s: list[float]
    # The device's yardstick (see peak), timed just before each measured round.
    yardstick_rates: list[float]
    losses: list[float]
    telemetry: dict[str, Any]
    profile: Path | None = None  # the profiler trace of one more round, if one was asked for


class CaseRunner:
    def __init__(self, options: PerfOptions, workloads: Callable[[], dict[str, WorkloadInfo]],
                 machine: Machine, sources: Sources, rules: GateRules, log_dir: Path,
                 session: str) -> None:
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

    def record_for(self, case: Case | None) -> CaseRecord | None:
        for record in reversed(self.records):
            if record.case == case:
                return record
        return None

    def _spec(self, case: Case, info: WorkloadInfo) -> WorkerSpec:
        size = self.options.size or MEASUREMENT[self.options.tier].size
        return WorkerSpec(
            case=case.axis_values(),
            workload_path=str(info.path),
            size=size,
            batch_size=self.options.batch_size or info.batch_size(size, case.precision),
            warmup_rounds=self.options.warmup_rounds,
            steps_per_round=self.options.steps_per_round,
            cache_dir=str(self.options.cache_dir),
            virtual=case.virtual,
            virtual_memory_mb=self._logical_gpu_memory_mb(case),
            all_reduce=self.options.all_reduce,
            file_layout=self.options.file_layout,
            cluster=self.options.cluster,
            retrace_round=1 if self.options.retrace_fault
            and self.options.retrace_fault in case.id else None,
        )

    def _logical_gpu_memory_mb(self, case: Case) -> int | None:
        """Each logical GPU's share of the physical GPU's memory (TensorFlow needs a limit to
        split a GPU), with a tenth left for the runtime."""
        if not (case.virtual and case.device_kind == "gpu" and self.gpu_memory_bytes):
            return None
        return int(self.gpu_memory_bytes * 0.9 / case.device_count) >> 20

    def _telemetry(self, case: Case, env: dict[str, str]
                   ) -> contextlib.AbstractContextManager[Sampler | None]:
        """NVML sampling of the case's GPUs during the measured rounds; none for CPU cases."""
        if case.device_kind != "gpu":
            return contextlib.nullcontext()
        visible = env["CUDA_VISIBLE_DEVICES"].split(",")
        # CUDA_VISIBLE_DEVICES holds indices in this suite's runs; NVML counts in PCI bus
        # order, which is CUDA's order when CUDA_DEVICE_ORDER=PCI_BUS_ID (set it on runners).
        return Sampler([int(i) for i in visible if i.isdigit()])

    def _inject_fraction(self, case: Case) -> float:
        injection = self.options.injection
        if injection is None or injection.pattern not in case.id:
            return 0.0
        return injection.fraction

    def _measure(self, case: Case, spec: WorkerSpec, drive: Drive,
                 log_name: str, profile_to: Path | None = None) -> Measured:
        """Start the case's worker (or cluster), warm it up, and let `drive` call one_round
        for each measured round, with yardstick before it; then profile one more round into
        `profile_to`, if given."""
        round_s: list[float] = []
        yardstick_rates: list[float] = []
        losses: list[float] = []
        env = worker_env(case, dict(os.environ))
        with launch(spec, env, self.options.timeout_s, self.log_dir / log_name,
                    self.options.cluster) as worker:
            ready = worker.wait_ready()
            self.build = self.build or ready.get("build")
            warm = ready["warm_round_s"] or [ready["first_round_s"]]
            inject = self._inject_fraction(case) * float(np.median(warm))

            def one_round() -> None:
                message = worker.run_round(inject)
                round_s.append(message["seconds"])
                losses.append(message["loss"])

            def yardstick() -> None:
                yardstick_rates.append(worker.yardstick())

            with self._telemetry(case, env) as sampler:
                drive(one_round, yardstick)
            telemetry = sampler.summary() if sampler else {
                "unavailable": "unavailable: a CPU case uses no GPU"}
            if profile_to is not None:
                worker.profile(profile_to)
            finished = worker.finish()
        return Measured(ready, finished, round_s, yardstick_rates, losses, telemetry, profile_to)

    def _profile_path(self, case: Case, suffix: str = "") -> Path:
        return self.options.profile_dir / self.session / f"{case.id}{suffix}"

    def _profiled(self, case: Case) -> bool:
        return any(text == "all" or text in case.id for text in self.options.profile)

    def run(self, case: Case, benchmark: Any) -> CaseRecord:
        record = CaseRecord(case)
        self.records.append(record)
        spec = self._spec(case, self.workloads()[case.workload])
        info = record.extra_info
        info.update(case_id=case.id, **case.axis_values(), virtual=case.virtual,
                    batch_size=spec.batch_size,
                    steps_per_round=spec.steps_per_round, size=spec.size)
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
        info.update(self._figures(spec, measured, benchmark))
        info.update(self._scaling(case, info["examples_per_sec"]))
        benchmark.extra_info.update(info)
        self._judge(record, spec, measured, benchmark)
        return record

    def _run_of(self, case: Case, spec: WorkerSpec, measured: Measured,
                scaling_efficiency: float | None) -> history.Run:
        """The run as the history keeps it: its fingerprint, median and every round's rate."""
        examples_per_round = _examples_per_round(spec, measured.ready)
        rates = tuple(examples_per_round / s for s in measured.round_s)
        config = {**case.axis_values(), "size": spec.size, "batch_size": spec.batch_size,
                  "steps_per_round": spec.steps_per_round, "rounds": self.options.rounds,
                  "warmup_rounds": spec.warmup_rounds}
        peak = measured.finished.get("peak_memory_bytes")
        return history.Run(
            case_id=case.id,
            fingerprint=fingerprint.of_case(self.machine, measured.ready.get("build", {}),
                                            case.device_kind, case.virtual, config),
            when=history.now(), session=self.session,
            examples_per_sec=examples_per_round / float(np.median(measured.round_s)),
            round_examples_per_sec=rates, scaling_efficiency=scaling_efficiency,
            peak_memory_bytes=float(peak) if peak else None)

    def _rerun(self, case: Case, spec: WorkerSpec) -> tuple[history.Run, Path | None]:
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
        """Examples/s per device over the 1-device figure of the same configuration (single
        strategy, default placement) measured in this session. Cases run in the matrix's
        order, which puts device count 1 first."""
        if remember:
            self.measured[case] = examples_per_sec
        if case.device_count == 1 and case.workers == 1 and case.strategy == "single":
            return {}
        reference = replace(case, device_count=1, strategy="single", placement="default",
                            workers=1, virtual=False)
        one = self.measured.get(reference)
        devices = case.device_count * case.workers
        return {
            "scaling_reference": reference.id,
            "scaling_efficiency": examples_per_sec / devices / one if one else None,
            **({} if one else {"scaling_note": f"{reference.id} did not run in this session"}),
        }

    def _figures(self, spec: WorkerSpec, measured: Measured, benchmark: Any) -> dict[str, Any]:
        ready, finished, worker_rounds = measured.ready, measured.finished, measured.round_s
        k = spec.steps_per_round
        steps = [r / k for r in worker_rounds]
        median_round = float(np.median(worker_rounds))
        examples_per_sec = _examples_per_round(spec, ready) / median_round
        flops_per_example = float(ready["flops_per_example"])
        stats = getattr(benchmark, "stats", None)
        outer = list(stats.stats.data) if stats is not None else []
        return {
            "examples_per_sec": examples_per_sec,
            **_input_figures(spec, finished, examples_per_sec, measured.telemetry),
            **_yardstick_figures(spec, measured, flops_per_example, examples_per_sec),
            "step_time_s": {"median": float(np.median(steps)), "p10": _percentile(steps, 10),
                            "p90": _percentile(steps, 90)},
            "compile_s": max(0.0, ready["first_round_s"] - median_round),
            # What a user waits for before training starts: setup, tracing and compilation.
            "time_to_first_step_s": ready["setup_s"] + ready["first_round_s"]
            - (k - 1) * float(np.median(steps)),
            "flops_per_example": flops_per_example,
            "strategy_run": ready["strategy"],
            # What proved XLA ran as named (see xla_proof): executions in a profiled round of
            # one process, or each cluster task's compilations (then executions is None).
            "xla_executions_per_round": ready["xla_executions"],
            "xla_compilations_by_task": ready["xla_compilations_by_task"],
            "placed_layers": ready["placed_layers"],
            "copies_per_step": ready["copies_per_step"],
            "transfers_per_step": ready["transfers_per_step"],
            # Ops that carry a layout, every one checked to run in the case's data format.
            "layout_ops_checked": ready["layout_ops"],
            "devices": ready["devices"],
            "loss_first": ready["loss_first"],
            "loss_last": finished["loss_last"],
            "peak_memory_bytes": finished["peak_memory_bytes"],
            # Traces of the training step: before measuring (tracing, compiling, the figures'
            # own traces) and during the measured rounds (must be none).
            "traces": {"before_measurement": ready["traces"],
                       "during_measurement": finished["traces_during_measurement"]},
            # XLA compilations, counted the same way (none in an `off` case).
            "xla_compilations": {
                "before_measurement": ready["compilations"],
                "during_measurement": finished["compilations_during_measurement"]},
            "worker": {"cpu_cores_busy": finished["cpu_cores_busy"],
                       "peak_rss_bytes": finished["peak_rss_bytes"],
                       "allocator_peak_bytes": finished["peak_memory_bytes"]},
            "worker_round_s": worker_rounds,
            # Round time seen by pytest over round time seen inside the worker, minus one:
            # what running the case in another process costs the measurement.
            "isolation_overhead": float(np.median(outer)) / median_round - 1 if outer else None,
        }

    def _judge(self, record: CaseRecord, spec: WorkerSpec, measured: Measured,
               benchmark: Any) -> None:
        info = record.extra_info
        first, last = info["loss_first"], info["loss_last"]
        if not last < first:
            # A run that did not learn is not a valid baseline either: not kept.
            benchmark.has_error = True
            record.failure = CaseFailure(
                "loss_not_falling", f"loss went from {first:.4g} to {last:.4g}: the workload "
                "did not learn, so its speed means nothing")
            raise record.failure
        unsteady = _unsteady(info["traces"]["during_measurement"],
                             info["xla_compilations"]["during_measurement"])
        if unsteady:
            # Not kept either: the rounds measured tracing or compiling, not training.
            record.failure = CaseFailure(
                "not_steady", f"during the measured rounds {unsteady}: the measurement did "
                "not see steady state")
            raise record.failure
        run = self._run_of(record.case, spec, measured, info.get("scaling_efficiency"))
        record.run = run
        info["fingerprint"] = run.fingerprint.to_json()
        if not self.options.gating:
            benchmark.extra_info.update(info)
            return
        throttles = gpu_telemetry.throttled(info["gpu_telemetry"])
        if throttles:
            record.gate = case_gate.not_judged(run, throttles)
            record.run = replace(run, verdict=record.gate.status)
            info["gate"] = _gate_info(record.gate, None)
            benchmark.extra_info.update(info)
            return
        settings = self.options.gate
        verdict = case_gate.assess(run, self.sources, self.rules, settings)
        again = profile = None
        if verdict.flagged and self.options.rerun:
            again, profile = self._rerun(record.case, spec)
        verdict = case_gate.conclude(verdict, again, self.rules, settings,
                                     datetime.date.today())
        if profile is not None:
            if verdict.failed:
                info["regression_profile"] = str(profile)
                verdict = replace(verdict, profile=str(profile))
            else:  # a slowdown not confirmed needs no diagnosis
                shutil.rmtree(profile, ignore_errors=True)
        record.gate = verdict
        record.run = replace(run, verdict=verdict.status, rerun_round_examples_per_sec=(
            again.round_examples_per_sec if again else ()))
        info["gate"] = _gate_info(verdict, again)
        benchmark.extra_info.update(info)
        if verdict.failed:
            record.failure = CaseFailure("regression", _regression_message(verdict))
            raise record.failure


def _unsteady(retraces: int, compilations: int) -> str:
    """What happened during the measured rounds that steady state rules out, or ''."""
    said = []
    if retraces:
        said.append(f"the training step was traced {retraces} more time(s)")
    if compilations:
        said.append(f"XLA compiled {compilations} more time(s)")
    return " and ".join(said)


def _gate_info(verdict: CaseGate, again: history.Run | None) -> dict[str, Any]:
    """The gate's verdict as extra_info carries it (and pytest-benchmark's JSON with it)."""
    return {
        "status": verdict.status,
        "history_runs": len(verdict.history),
        "fingerprint_key": verdict.run.fingerprint.key,
        "fingerprint_differs": verdict.fingerprint_note or None,
        "soft_differences": verdict.soft_note or None,
        "waiver": verdict.waiver_note or None,
        "not_judged": verdict.unjudged or None,
        "rerun_examples_per_sec": again.examples_per_sec if again else None,
        "figures": {v.metric.name: {"status": v.status, "now": v.now, "baseline": v.baseline,
                                    "change": v.change, "z": v.z, "threshold": v.threshold,
                                    "method": v.method, "p_value": v.p_value, "note": v.note}
                    for v in verdict.verdicts},
    }


def _regression_message(verdict: CaseGate) -> str:
    parts = []
    for v in verdict.verdicts:
        if v.status == gate.REGRESSION:
            assert v.baseline is not None and v.z is not None and v.threshold is not None
            parts.append(f"{v.metric.label} {v.slowdown:.1%} worse than its history's median "
                         f"({v.now:.4g} vs {v.baseline:.4g}, z={v.z:.1f}, {v.method}; effect "
                         f"floor {v.threshold:.1%}); confirmed: {v.note}")
    return "; ".join(parts) + (f"; {verdict.waiver_note}" if verdict.waiver_note else "")
