"""Warm a built case up: the first round (tracing, compiling: its time is the compile time), the
proof that XLA ran as the case names, the warm-up rounds; then READY with what was built."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import tensorflow as tf

from tfperf.processes import protocol
from tfperf.processes.protocol import WorkerSpec
from tfperf.worker.case.build import Built
from tfperf.worker.case.phases import Phases
from tfperf.worker.proofs import case_checks, topology, xla_compilations, xla_proof
from tfperf.worker.telemetry import reported


@dataclass
class Warm:
    """What serving the case goes on from."""

    first_loss: float
    loss: float  # the first round's mean: the last loss until a measured round
    traces: int  # traced so far: any more during the measured rounds is a retrace
    compilations: int


def _spin_cpu(seconds: float) -> None:
    """Burn this much of the process's CPU time, however long the machine makes it take."""
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def case(built: Built, spec: WorkerSpec, phases: Phases, compiled: Path,
         channel: IO[str]) -> Warm:
    """`compiled` is the folder that counts XLA compilations (see xla_compilations)."""
    phases.enter("compiling")
    k = spec.steps_per_round
    # Test-only (--perf-inject-cost): memory held through the first round only, on the case's
    # device: the case's peak grows, and its phases say where (telemetry.phase_memory).
    with tf.device(built.devices[0]):
        held = tf.Variable(tf.zeros([spec.faults.memory_mb * 2**18])) \
            if spec.faults.memory_mb else None
    start = time.perf_counter()
    cpu_start = time.process_time()
    _spin_cpu(spec.faults.compile_s)  # test-only: a compile that takes this much longer
    first = built.source.round(k)
    first_round_s = time.perf_counter() - start
    first_round_cpu_s = time.process_time() - cpu_start
    del held
    case_checks.check_finite(first.mean_loss, k)
    xla = spec.case["xla"]
    resolver = built.settings.resolver
    if resolver is None:
        phases.enter("proving XLA")
        proof = xla_proof.prove_in_a_round(built.source, k, xla)
    phases.enter("warming up")
    warm_rounds = []
    for r in range(1, spec.warmup_rounds):
        start = time.perf_counter()
        result = built.source.round(k)
        warm_rounds.append(time.perf_counter() - start)
        case_checks.check_finite(result.mean_loss, (r + 1) * k)
    if resolver is not None:
        # After the warm-up, so that auto-clustering has compiled what it will.
        phases.enter("proving XLA")
        proof = xla_proof.prove_in_tasks(xla, compiled, topology.task_label(resolver),
                                         built.step_tasks)
    phases.memory.close(phases.phase)  # the warm-up's last phase, before any command
    warm = Warm(first.first_loss, first.mean_loss, built.trainer.traces,
                xla_compilations.count(compiled))
    protocol.send(
        channel, protocol.READY, setup_s=built.setup_s, first_round_s=first_round_s,
        # CPU time, all threads: what tracing and compiling cost, whatever else the machine
        # runs (an A/B's other workers warm up at the same time).
        first_round_cpu_s=first_round_cpu_s, warm_round_s=warm_rounds, loss_first=first.first_loss,
        **built.told, **proof, build=reported.build_info(), traces=warm.traces,
        compilations=warm.compilations)
    return warm
