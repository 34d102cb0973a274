"""The worker: one process per case, run as `python -m tfperf.worker`.

It reads a WorkerSpec from stdin, builds and warms up the case, then runs one measured round
per ROUND command until FINISH. Anything it knows went wrong is reported as a FAILED event
with a kind; anything it cannot report (a segfault, the OOM killer, a hang) the runner works
out from the process itself.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import IO, Any

from tfperf.ground.failures import in_one_line
from tfperf.processes import protocol
from tfperf.processes.process_setup import claim_stdout, without_plotting
from tfperf.worker.proofs import case_checks, topology, xla_compilations, xla_proof, xla_trace
from tfperf.worker.telemetry import reported


class Progress:
    """Which phase the worker is in, told to the runner as it changes: a failure is named for
    where it happened, even one that kills the process before it can say anything."""

    def __init__(self, channel: IO[str]) -> None:
        self.channel = channel
        self.phase = "building"  # the runner's own assumption until told otherwise

    def enter(self, phase: str) -> None:
        self.phase = phase
        protocol.send(self.channel, protocol.PHASE, phase=phase)


def _spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def _spin_cpu(seconds: float) -> None:
    """Burn this much of the process's CPU time, however long the machine makes it take."""
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def run(spec: protocol.WorkerSpec, channel: IO[str], progress: Progress, started: float,
        compiled: Path) -> None:
    """`compiled` is the folder that counts XLA compilations (see xla_compilations)."""
    import keras
    import tensorflow as tf

    from tfperf.cases import xla_modes
    from tfperf.worker import pipelines, placements, strategies
    from tfperf.worker.proofs.transfers import per_step as transfers_per_step
    from tfperf.worker.telemetry import step_flops, yardsticks
    from tfperf.worker.training import loop
    from tfperf.workload import MemoryBound, ModelConfig, load_module

    case = spec.case
    kind = case["device_kind"].upper()
    count = int(case["device_count"])
    workers = int(case["workers"])
    if spec.virtual:
        topology.split_device(kind, count, spec.virtual_memory_mb)
    devices = [f"/device:{kind}:{i}" for i in range(count)]
    variable_strategy = strategies.load(case["strategy"])
    settings = strategies.StrategySettings(
        all_reduce=spec.all_reduce,
        parameter_device="host" if case["placement"] == "ps_host" else "device",
        workers=workers,
        resolver=topology.resolver(spec, workers) if workers > 1 else None)
    described = variable_strategy.describe(devices, settings)
    # Before anything starts TensorFlow's runtime: a multi-worker strategy configures it.
    strategy = variable_strategy.create(devices, settings)
    # Keras 3 draws initial weights from its own seed generator, which tf.random.set_seed does
    # not reach: seeded by TensorFlow alone, every run started from other weights, and a short
    # run's loss sometimes rose (ResNet-20, 12 steps: 2 runs in 9).
    keras.utils.set_random_seed(spec.seed)
    found = [d.name for d in tf.config.list_logical_devices(kind)]
    if len(found) < count:
        raise case_checks.ConfigurationError(f"the case needs {count} {kind} devices, TensorFlow has "
                                 f"{len(found)}: {found}")
    workload = load_module(Path(spec.workload_path))
    config = ModelConfig(spec.size, spec.batch_size, case["data_format"], spec.seed)
    # Proof that the strategy is what the case asked for, not only that it was asked for.
    if strategy.num_replicas_in_sync != described["replicas"]:
        raise case_checks.ConfigurationError(f"{case['strategy']} runs {strategy.num_replicas_in_sync} "
                                 f"replicas, the case asked for {described['replicas']}")
    coordinator = variable_strategy.coordinator(strategy) \
        if isinstance(variable_strategy, strategies.Coordinated) else None
    placement = placements.load(case["placement"])
    assignment: dict[str, str] = {}

    def place(model: Any) -> dict[str, str]:
        assignment.update(placement.assign(model, workload, devices))
        return assignment

    # Ops must run exactly where a model-parallel placement puts them: with soft placement
    # off, TensorFlow fails rather than quietly moving them.
    tf.config.set_soft_device_placement(case["placement"] in ("default", "ps_host"))
    trainer = loop.Trainer(
        workload,
        config,
        strategy,
        devices[0],
        xla_modes.MODES[case["xla"]].jit_compile,
        case["precision"],
        remote_variables=variable_strategy.remote_variables,
        place=place,
        coordinator=coordinator,
    )
    case_checks.check_variables(trainer.model, assignment)
    step_graph = trainer.step_graph(spec.batch_size)
    local = topology.local_device(settings, devices[0])
    copies = placements.copies(step_graph, local)
    layout_ops = case_checks.check_layout(step_graph, case["data_format"])
    moved = transfers_per_step(trainer.whole_step_graph(), local)
    source = pipelines.load(case["input"]).build(pipelines.PipelineContext(
        trainer, case["preprocess"] == "device", Path(spec.cache_dir), spec.file_layout))
    # Interpreter up to model and input ready: TensorFlow's import, the build, input files.
    setup_s = time.perf_counter() - started
    flops_per_example = step_flops.count_graph(step_graph) / spec.batch_size
    # What each round is rated against, timed beside it (see peak): a memory-bound workload's
    # bytes against the copy rate, the others' FLOPs against the matrix-product rate of the
    # dtype the model computes in.
    bandwidth: dict[str, float] = {}
    if isinstance(workload, MemoryBound):
        yardstick = yardsticks.copy(devices[0])
        bandwidth["bytes_per_example"] = workload.bytes_per_example(config)
    else:
        yardstick = yardsticks.matmul(devices[0], tf.as_dtype(trainer.model.compute_dtype))

    progress.enter("compiling")
    k = spec.steps_per_round
    # Test-only (--perf-inject-cost): memory held from here to the end, on the case's device.
    with tf.device(devices[0]):
        _held = tf.Variable(tf.zeros([spec.inject_memory_mb * 2**18])) \
            if spec.inject_memory_mb else None
    start = time.perf_counter()
    cpu_start = time.process_time()
    _spin_cpu(spec.inject_compile_s)  # test-only: a compile that takes this much longer
    first = source.round(k)
    first_round_s = time.perf_counter() - start
    first_round_cpu_s = time.process_time() - cpu_start
    case_checks.check_finite(first.mean_loss, k)
    step_tasks = topology.step_tasks(settings.resolver, coordinator is not None)
    in_cluster = settings.resolver is not None
    if not in_cluster:
        progress.enter("proving XLA")
        proof = xla_proof.prove_in_a_round(source, k, case["xla"])
    progress.enter("warming up")
    warm_rounds = []
    for r in range(1, spec.warmup_rounds):
        start = time.perf_counter()
        result = source.round(k)
        warm_rounds.append(time.perf_counter() - start)
        case_checks.check_finite(result.mean_loss, (r + 1) * k)
    if in_cluster:
        # After the warm-up, so that auto-clustering has compiled what it will.
        progress.enter("proving XLA")
        proof = xla_proof.prove_in_tasks(case["xla"], compiled, topology.task_label(settings.resolver),
                                    step_tasks)
    traces_ready = trainer.traces
    compilations_ready = xla_compilations.count(compiled)
    protocol.send(
        channel,
        protocol.READY,
        setup_s=setup_s,
        first_round_s=first_round_s,
        # CPU time, all threads: what tracing and compiling cost, whatever else the machine
        # runs (an A/B's other workers warm up at the same time).
        first_round_cpu_s=first_round_cpu_s,
        warm_round_s=warm_rounds,
        loss_first=first.first_loss,
        flops_per_example=flops_per_example,
        devices=found,
        strategy=described,
        **proof,
        placed_layers=len(assignment),
        copies_per_step={"count": copies.count, "bytes": copies.bytes},
        transfers_per_step=moved,
        layout_ops=layout_ops,
        build=reported.build_info(),
        traces=traces_ready,
        compilations=compilations_ready,
        **bandwidth,
    )
    step = spec.warmup_rounds * k
    last_loss = first.mean_loss
    measured_s = measured_cpu_s = 0.0
    measured_round = 0
    for line in sys.stdin:
        command = protocol.parse(line)
        if command["kind"] == protocol.FINISH:
            break
        if command["kind"] == protocol.YARDSTICK:
            rate, cpu_share = yardstick.rate(int(command.get("repeat", 1)))
            protocol.send(channel, protocol.YARDSTICK_DONE, rate=rate, cpu_share=cpu_share)
            continue
        if command["kind"] == protocol.PROFILE:
            where = Path(command["logdir"]) / topology.profile_folder(settings.resolver)
            rounds = xla_trace.profiled_rounds(source, k, where, step_tasks)
            step += k * len(rounds)
            case_checks.check_finite(rounds[-1].mean_loss, step)
            protocol.send(channel, protocol.PROFILED, logdir=str(where), steps=k * len(rounds))
            continue
        if measured_round == spec.retrace_round:
            trainer.force_retrace()
        inject = float(command.get("inject_seconds", 0.0))
        start = time.perf_counter()
        cpu_start = time.process_time()
        result = source.round(k)
        # Test-only: extra work, a fixed time or a share of this round's own time (A/B).
        inject += float(command.get("inject_fraction", 0.0)) * (time.perf_counter() - start)
        if inject:
            _spin(inject)
        seconds = time.perf_counter() - start
        measured_s += seconds
        measured_cpu_s += time.process_time() - cpu_start
        step += k
        case_checks.check_finite(result.mean_loss, step)
        last_loss = result.mean_loss
        protocol.send(channel, protocol.ROUND_DONE, seconds=seconds, loss=result.mean_loss)
        measured_round += 1
    traces_measured = trainer.traces - traces_ready
    compilations_measured = xla_compilations.count(compiled) - compilations_ready
    # After the measured rounds, so that neither figure disturbs them.
    batch_examples = spec.batch_size * trainer.strategy.num_replicas_in_sync
    alone = reported.input_figures(source, trainer, spec, batch_examples)
    protocol.send(
        channel,
        protocol.FINISHED,
        loss_last=last_loss,
        peak_memory_bytes=reported.peak_memory(devices[0].replace("/device:", "")),
        # All threads of this process (TF's pools included) over the measured rounds' wall time.
        cpu_cores_busy=measured_cpu_s / measured_s if measured_s else None,
        round_cpu_s=measured_cpu_s / measured_round if measured_round else None,
        peak_rss_bytes=reported.peak_rss(),
        traces_during_measurement=traces_measured,
        compilations_during_measurement=compilations_measured,
        **alone,
    )


def main() -> int:
    started = time.perf_counter()
    without_plotting()
    channel = claim_stdout()
    spec = protocol.WorkerSpec.from_json(sys.stdin.readline())
    progress = Progress(channel)
    # The runner's scratch folder, which it removes; a worker started by hand makes its own.
    scratch = os.environ.get(protocol.SCRATCH_ENV)
    compiled = Path(scratch) / "xla-compilations" if scratch else \
        Path(tempfile.mkdtemp(prefix="tfperf-xla-compilations-"))
    compiled.mkdir(exist_ok=True)
    xla_compilations.enable(os.environ, compiled)
    try:
        run(spec, channel, progress, started, compiled)
    except Exception as error:
        traceback.print_exc()
        protocol.send(
            channel,
            protocol.FAILED,
            failure=case_checks.classify(error, progress.phase),
            message=in_one_line(error),
            phase=progress.phase,
        )
        return 1
    finally:
        shutil.rmtree(compiled, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
