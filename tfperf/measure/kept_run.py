"""A measured case's run as the history keeps it: its fingerprint, median and every round's
rate, and the figures the gate judges besides throughput."""

from __future__ import annotations

from typing import Any

import numpy as np

from tfperf.cases.matrix import Case
from tfperf.ground.machine import Machine
from tfperf.measure import figures
from tfperf.measure.figures import Measured
from tfperf.processes.protocol import WorkerSpec
from tfperf.storage import fingerprint, session_files


def configuration(case: Case, spec: WorkerSpec, rounds: int, version: int) -> dict[str, Any]:
    """What the case's fingerprint hashes as its configuration (fingerprint.case_config)."""
    measuring = {"size": spec.size, "batch_size": spec.batch_size, "steps_per_round":
                 spec.steps_per_round, "rounds": rounds, "warmup_rounds": spec.warmup_rounds}
    return fingerprint.case_config(case.axis_values(), measuring, version)


def of(case: Case, spec: WorkerSpec, measured: Measured, scaling_efficiency: float | None,
       machine: Machine, version: int, rounds: int, session: str) -> session_files.Run:
    examples_per_round = figures.examples_per_round(spec, measured.ready)
    rates = tuple(examples_per_round / s for s in measured.round_s)
    config = configuration(case, spec, rounds, version)
    peak = measured.finished.get("peak_memory_bytes")
    return session_files.Run(
        case_id=case.id,
        fingerprint=fingerprint.of_case(machine, measured.ready.get("build", {}),
                                        case.device_kind, case.virtual, config),
        when=session_files.now(), session=session,
        examples_per_sec=examples_per_round / float(np.median(measured.round_s)),
        round_examples_per_sec=rates, scaling_efficiency=scaling_efficiency,
        peak_memory_bytes=float(peak) if peak else None,
        compile_cpu_s=figures.compile_cpu_s(measured.ready, measured.finished),
        wall_s=measured.wall_s)
