"""Serve a warm case: each of the runner's commands is one handler of a table (a measured round,
a yardstick burst, a profiled round) until FINISH; then FINISHED with the figures that are read
after the measured rounds, so that they disturb none."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from tfperf.processes import protocol
from tfperf.processes.protocol import WorkerSpec
from tfperf.worker.case.build import Built
from tfperf.worker.case.warm_up import Warm
from tfperf.worker.proofs import case_checks, topology, xla_compilations, xla_trace
from tfperf.worker.telemetry import op_profile, reported
from tfperf.worker.telemetry.phase_memory import PhasePeaks


@dataclass
class Served:
    """The case's state between commands."""

    built: Built
    spec: WorkerSpec
    channel: IO[str]
    step: int  # steps trained so far
    last_loss: float
    memory: PhasePeaks  # each command's kind is a phase of its own
    measured_s: float = 0.0
    measured_cpu_s: float = 0.0
    measured_rounds: int = 0


def _spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def _round(served: Served, command: dict[str, Any]) -> None:
    built, k = served.built, served.spec.steps_per_round
    if served.measured_rounds == served.spec.faults.retrace_round:
        built.trainer.force_retrace()
    inject = float(command.get("inject_seconds", 0.0))
    start = time.perf_counter()
    cpu_start = time.process_time()
    result = built.source.round(k)
    # Test-only: extra work, a fixed time or a share of this round's own time (A/B).
    inject += float(command.get("inject_fraction", 0.0)) * (time.perf_counter() - start)
    if inject:
        _spin(inject)
    seconds = time.perf_counter() - start
    cpu_s = time.process_time() - cpu_start  # all this process's threads
    served.measured_s += seconds
    served.measured_cpu_s += cpu_s
    served.step += k
    case_checks.check_finite(result.mean_loss, served.step)
    served.last_loss = result.mean_loss
    served.memory.close("measured rounds")
    protocol.send(served.channel, protocol.ROUND_DONE, seconds=seconds, cpu_s=cpu_s,
                  loss=result.mean_loss)
    served.measured_rounds += 1


def _yardstick(served: Served, command: dict[str, Any]) -> None:
    rate, cpu_share = served.built.yardstick.rate(int(command.get("repeat", 1)))
    served.memory.close("yardstick")
    protocol.send(served.channel, protocol.YARDSTICK_DONE, rate=rate, cpu_share=cpu_share)


def _profile(served: Served, command: dict[str, Any]) -> None:
    built, k = served.built, served.spec.steps_per_round
    where = Path(command["logdir"]) / topology.profile_folder(built.settings.resolver)
    rounds = xla_trace.profiled_rounds(built.source, k, where, built.step_tasks)
    served.step += k * len(rounds)
    case_checks.check_finite(rounds[-1].mean_loss, served.step)
    served.memory.close("profiled rounds")
    # Summarised here, where TensorFlow is, when asked: what the A/B's where-report compares.
    # A measured case's profile is its trace alone (TensorBoard's), so it reads none.
    summary = op_profile.summarise(where, k * len(rounds)) if command.get("summarise") else None
    protocol.send(served.channel, protocol.PROFILED, logdir=str(where), steps=k * len(rounds),
                  profile=summary)


HANDLERS: dict[str, Callable[[Served, dict[str, Any]], None]] = {
    protocol.ROUND: _round, protocol.YARDSTICK: _yardstick, protocol.PROFILE: _profile}


def case(built: Built, warm: Warm, spec: WorkerSpec, lines: Iterable[str], channel: IO[str],
         compiled: Path, memory: PhasePeaks) -> None:
    """Run the commands read from `lines` until FINISH, then say FINISHED."""
    served = Served(built, spec, channel, spec.warmup_rounds * spec.steps_per_round, warm.loss,
                    memory)
    for line in lines:
        command = protocol.parse(line)
        if command["kind"] == protocol.FINISH:
            break
        handler = HANDLERS.get(command["kind"])
        if handler is None:
            raise ValueError(f"not a worker command: {command['kind']!r}; valid: "
                             f"{', '.join([*HANDLERS, protocol.FINISH])}")
        handler(served, command)
    _finish(served, warm, compiled)


def _finish(served: Served, warm: Warm, compiled: Path) -> None:
    built, spec = served.built, served.spec
    traces_measured = built.trainer.traces - warm.traces
    compilations_measured = xla_compilations.count(compiled) - warm.compilations
    # After the measured rounds, so that neither figure disturbs them.
    batch_examples = spec.batch_size * built.trainer.strategy.num_replicas_in_sync
    alone = reported.input_figures(built.source, built.trainer, spec, batch_examples)
    served.memory.close("input figures")
    protocol.send(
        served.channel, protocol.FINISHED, loss_last=served.last_loss,
        # The highest phase's: each phase reset the allocator's statistics as it ended.
        peak_memory_bytes=served.memory.overall() if served.memory.peaks else
        reported.peak_memory(built.devices[0].replace("/device:", "")),
        # Pairs, not an object: the phases' order is kept (messages are written key-sorted).
        memory_by_phase=list(served.memory.peaks.items()),
        # All threads of this process (TF's pools included) over the measured rounds' wall time.
        cpu_cores_busy=served.measured_cpu_s / served.measured_s if served.measured_s else None,
        round_cpu_s=served.measured_cpu_s / served.measured_rounds
        if served.measured_rounds else None,
        peak_rss_bytes=reported.peak_rss(), traces_during_measurement=traces_measured,
        compilations_during_measurement=compilations_measured, **alone)
