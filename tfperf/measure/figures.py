"""A measured case's figures: examples/s, MFU (or the fraction of the copy rate) round by round
against the yardstick timed beside each round, the input pipeline's share, and everything the
worker reported, as extra_info carries them."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tfperf.measure import diagnosis, sanity
from tfperf.processes.protocol import WorkerSpec


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


def examples_per_round(spec: WorkerSpec, ready: dict[str, Any]) -> int:
    # Every replica trains on its own batch; a model-parallel case is one replica.
    return spec.batch_size * int(ready["strategy"]["replicas"]) * spec.steps_per_round


def beside_rounds(round_s: list[float], yardstick: list[float]) -> list[float]:
    """The yardstick rate each round is rated against. With one burst more than rounds, the
    bursts lie between the rounds and each round gets the faster of the two beside it: a burst
    the machine disturbed reads low (a 0.1 s burst can be hit where the round beside it is
    not), and no burst reads faster than the device. With as many bursts as rounds (an A/B
    side's turns), the one before it."""
    if len(yardstick) not in (len(round_s), len(round_s) + 1) or not round_s:
        raise ValueError(f"{len(round_s)} rounds and {len(yardstick)} yardstick bursts: "
                         "each round needs its own, or one on each side")
    if len(yardstick) == len(round_s):
        return list(yardstick)
    return [max(pair) for pair in itertools.pairwise(yardstick)]


def paired_fraction(work_per_round: float, round_s: list[float], yardstick: list[float],
                    devices: int) -> float:
    """The median over rounds of each round's rate over the rate of the yardstick timed beside
    it (beside_rounds), for `devices` devices each with that yardstick: what the workload
    achieved of what the device could do at that moment. A rate measured once per session
    would carry the machine's speed swings between it and the rounds into the ratio."""
    return float(np.median([work_per_round / s / (rate * devices) for s, rate in
                            zip(round_s, beside_rounds(round_s, yardstick), strict=True)]))


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
    per_round = examples_per_round(spec, ready)
    devices = yardstick_devices(spec)
    # The rate the rounds were rated against (a disturbed burst left out), as sanity compares
    # it across the session's cases.
    rate = float(np.median(beside_rounds(measured.round_s, measured.yardstick_rates)))
    known = [s for s in measured.yardstick_cpu_shares if s is not None]
    shares = {"yardstick_cpu_share_by_round": known} if known else {}
    if "bytes_per_example" in ready:
        per_example = float(ready["bytes_per_example"])
        # A memory-bound workload has no matrix products to rate: judged by bandwidth.
        return {"mfu": None, "yardstick_devices": devices, "bytes_per_example": per_example,
                "bytes_per_sec": per_example * examples_per_sec,
                "copy_bytes_per_sec": rate, "copy_bytes_per_sec_by_round": measured.yardstick_rates,
                **shares,
                "fraction_of_copy_rate": paired_fraction(
                    per_example * per_round, measured.round_s,
                    measured.yardstick_rates, devices)}
    return {"mfu": paired_fraction(flops_per_example * per_round, measured.round_s,
                                   measured.yardstick_rates, devices),
            "yardstick_devices": devices,
            "peak_flops_per_device": rate,
            "peak_flops_per_device_by_round": measured.yardstick_rates,
            **shares}


@dataclass(frozen=True)
class Measured:
    """One measurement of a case by one worker (or cluster)."""

    ready: dict[str, Any]
    finished: dict[str, Any]
    round_s: list[float]
    # The device's yardstick (see yardsticks), one slot before each measured round and, for a
    # single case, once more after the last; a slot with no burst of its own repeats the last
    # (--perf-yardstick-every, yardstick_bursts).
    yardstick_rates: list[float]
    losses: list[float]
    telemetry: dict[str, Any]
    profile: Path | None = None  # the profiler trace of one more round, if one was asked for
    wall_s: float | None = None  # the processes' start to their end
    # Each burst's share of the cores' time its process had (protocol.Burst); None on GPU,
    # and not kept by an A/B side, whose turns watch the CPUs themselves.
    yardstick_cpu_shares: list[float | None] = field(default_factory=list)


def figures(spec: WorkerSpec, measured: Measured, benchmark: Any) -> dict[str, Any]:
    """Everything a measured case reports in extra_info, from what its worker said and
    pytest-benchmark's own timing of the rounds."""
    ready, finished, worker_rounds = measured.ready, measured.finished, measured.round_s
    k = spec.steps_per_round
    steps = [r / k for r in worker_rounds]
    median_round = float(np.median(worker_rounds))
    examples_per_sec = examples_per_round(spec, ready) / median_round
    flops_per_example = float(ready["flops_per_example"])
    stats = getattr(benchmark, "stats", None)
    outer = list(stats.stats.data) if stats is not None else []
    found = {
        "examples_per_sec": examples_per_sec,
        **_input_figures(spec, finished, examples_per_sec, measured.telemetry),
        **_yardstick_figures(spec, measured, flops_per_example, examples_per_sec),
        "step_time_s": {"median": float(np.median(steps)), "p10": _percentile(steps, 10),
                        "p90": _percentile(steps, 90)},
        # Below zero is flagged (sanity.suspect), never clamped: it says no compile time was
        # measurable, which zero would hide.
        "compile_s": ready["first_round_s"] - median_round,
        "compile_cpu_s": compile_cpu_s(ready, finished),
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
        # The allocator's peak in each phase: the step's, its compilation's or the harness's.
        "memory_by_phase": finished.get("memory_by_phase"),
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
    # With the case's axis values: some flags hold for one worker process only.
    found["figures_flagged"] = sanity.suspect({**spec.case, **found})
    return found


def unsteady(retraces: int, compilations: int) -> str:
    """What happened during the measured rounds that steady state rules out, or ''."""
    said = []
    if retraces:
        said.append(f"the training step was traced {retraces} more time(s)")
    if compilations:
        said.append(f"XLA compiled {compilations} more time(s)")
    return " and ".join(said)


def compile_cpu_s(ready: Mapping[str, Any], finished: Mapping[str, Any]) -> float | None:
    """The CPU time (all threads) of a worker's first round beyond that of a measured round:
    tracing and compiling. CPU time, since workers that warm up together (an A/B duet, a
    cluster's tasks) stretch each other's wall time; None from a worker that did not say."""
    first, measured = ready.get("first_round_cpu_s"), finished.get("round_cpu_s")
    return float(first) - float(measured) if first is not None and measured is not None \
        else None
