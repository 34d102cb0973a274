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
from typing import IO, TYPE_CHECKING, Any

from tfperf import protocol, xla_compilations
from tfperf.failures import in_one_line
from tfperf.process_start import claim_stdout, without_plotting

if TYPE_CHECKING:
    from tfperf import training
    from tfperf.pipelines import Source
    from tfperf.training import RoundResult


class NonFiniteLoss(Exception):
    pass


class ConfigurationError(Exception):
    """The case did not run as named (devices, replicas): its figures would be mislabelled."""


def _split(kind: str, count: int, memory_mb: int | None) -> None:
    """Split the first physical device of `kind` into `count` logical devices; must run before
    TensorFlow's runtime starts."""
    import tensorflow as tf

    physical = tf.config.list_physical_devices(kind)
    if not physical:
        raise ConfigurationError(f"no physical {kind} device to split into {count}")
    config = tf.config.LogicalDeviceConfiguration(memory_limit=memory_mb if kind == "GPU" else None)
    tf.config.set_logical_device_configuration(physical[0], [config] * count)


class Progress:
    """Which phase the worker is in, told to the runner as it changes: a failure is named for
    where it happened, even one that kills the process before it can say anything."""

    def __init__(self, channel: IO[str]) -> None:
        self.channel = channel
        self.phase = "building"  # the runner's own assumption until told otherwise

    def enter(self, phase: str) -> None:
        self.phase = phase
        protocol.send(self.channel, protocol.PHASE, phase=phase)


def classify(error: BaseException, phase: str) -> str:
    import tensorflow as tf

    if isinstance(error, tf.errors.ResourceExhaustedError | MemoryError):
        return "out_of_memory"
    if isinstance(error, NonFiniteLoss):
        return "non_finite_loss"
    if isinstance(error, ConfigurationError):
        return "configuration"
    if phase == "compiling":
        return "compile_error"
    return "error"


def _check_finite(loss: float, step: int) -> None:
    if loss != loss or loss in (float("inf"), float("-inf")):
        raise NonFiniteLoss(f"loss is {loss} at step {step}")


def _spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def _build() -> dict[str, str | None]:
    """What TensorFlow was built as: its version and git hash, and the CUDA and cuDNN it was
    built against (None in a CPU-only build). Part of every result's hard fingerprint."""
    import tensorflow as tf

    info = tf.sysconfig.get_build_info()
    return {"tensorflow": tf.__version__, "tensorflow_git": tf.version.GIT_VERSION,
            "cuda": info.get("cuda_version"), "cudnn": info.get("cudnn_version")}


def _peak_memory(device: str) -> int | None:
    import tensorflow as tf

    try:
        return int(tf.config.experimental.get_memory_info(device)["peak"])
    except (ValueError, tf.errors.OpError):
        return None


def _peak_rss() -> int | None:
    """The process's peak resident set (VmHWM), in bytes."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


ALONE_BATCHES = 20  # batches the pipeline is timed over without training
ALONE_ROUNDS = 2  # rounds the step is timed over on device-resident batches


def _check_variables(model: Any, assignment: dict[str, str]) -> None:
    """Each placed layer's variables live on its device (a proof, not the request)."""
    import tensorflow as tf

    for layer in model.layers:
        if layer.name not in assignment:
            continue
        want = tf.DeviceSpec.from_string(assignment[layer.name])
        for variable in layer.weights:
            have = tf.DeviceSpec.from_string(variable.value.device)
            if (have.device_type, have.device_index) != (want.device_type, want.device_index):
                raise ConfigurationError(f"{variable.path} is on {variable.value.device}, its "
                                         f"placement says {assignment[layer.name]}")


# Ops whose layout is an attribute: convolutions forward and backward, pooling, batch norm.
_LAYOUT_OPS = ("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", "MaxPool", "MaxPoolGrad",
               "AvgPool", "AvgPoolGrad", "FusedBatchNormV3", "FusedBatchNormGradV3", "BiasAdd",
               "BiasAddGrad")


def _check_layout(graph: Any, data_format: str) -> int:
    """Every layout-carrying op of the step runs in the case's data format (an NCHW case whose
    convolutions ran NHWC behind transposes would be mislabelled). Returns how many there are."""
    from tfperf.flops import live_ops

    checked = 0
    for op in live_ops(graph.outputs):
        if op.type not in _LAYOUT_OPS:
            continue
        have = op.get_attr("data_format").decode()
        # BiasAdd of a dense layer says NHWC for "channels last", whatever the case's layout.
        if op.type.startswith("BiasAdd") and op.inputs[0].shape.rank != 4:
            continue
        if have != data_format:
            raise ConfigurationError(f"{op.type} {op.name} runs in {have}, the case is "
                                     f"{data_format}")
        checked += 1
    return checked


def _local_device(settings: Any, device: str) -> str:
    """`device` with the job and task whose ops it runs: this process's task, or a worker
    task for a coordinator's steps (sent to whichever worker is free)."""
    resolver = settings.resolver
    if resolver is None:
        return f"/job:localhost/replica:0/task:0{device}"
    if resolver.task_type == "chief":
        return f"/job:worker/replica:0/task:0{device}"
    return f"/job:{resolver.task_type}/replica:0/task:{resolver.task_id}{device}"


def _resolver(spec: protocol.WorkerSpec, workers: int) -> Any:
    """Where the other tasks are; a proof that the cluster has the workers the case names."""
    from tfperf import cluster, resolvers

    case = spec.case
    resolved = resolvers.resolver(spec.cluster, case["device_kind"], int(case["device_count"]),
                                  cluster.jobs(case["strategy"], workers))
    have = resolvers.worker_count(resolved)
    if have != workers:
        raise ConfigurationError(f"the case needs {workers} workers, the {spec.cluster} cluster "
                                 f"has {have}: {resolved.cluster_spec().as_dict()}")
    return resolved


def _step_tasks(resolver: Any, coordinated: bool) -> dict[str, str]:
    """The remote tasks that run the steps (name -> address): a coordinator's workers."""
    if not coordinated:
        return {}
    addresses = resolver.cluster_spec().job_tasks("worker")
    return {f"worker:{i}": address for i, address in enumerate(addresses)}


def _profiled_rounds(source: Source, k: int, logdir: Path, tasks: dict[str, str]
                     ) -> list[RoundResult]:
    """One round under TensorFlow's profiler, into logdir. Where the steps run in remote tasks,
    their own profiles go there too (TensorBoard shows each task as a host), taken while
    rounds run for a two-second window."""
    from tfperf import xla_trace

    if not tasks:
        with xla_trace.profiling(logdir):
            return [source.round(k)]
    rounds: list[RoundResult] = []
    with xla_trace.profiling(logdir):
        xla_trace.trace_tasks(list(tasks.values()), logdir,
                              lambda: rounds.append(source.round(k)), 2.0)
    return rounds


def _task_name(resolver: Any) -> str:
    """The folder of this task's profile: the cluster's tasks each write their own."""
    return "local" if resolver is None else f"{resolver.task_type}{resolver.task_id}"


def _task_label(resolver: Any) -> str:
    """This task as the cluster names it, worker:1."""
    return f"{resolver.task_type}:{resolver.task_id}"


def _step_alone(trainer: training.Trainer, k: int, batch_examples: int) -> float:
    """Examples/s of the step with no input cost (the device-resident pool)."""
    trainer.run_round(k)  # traced and warm
    times = []
    for _ in range(ALONE_ROUNDS):
        start = time.perf_counter()
        trainer.run_round(k)
        times.append(time.perf_counter() - start)
    return batch_examples * k / sorted(times)[len(times) // 2]


def _input_figures(source: Source, trainer: training.Trainer, spec: protocol.WorkerSpec,
                   batch_examples: int) -> dict[str, Any]:
    """The pipeline alone and the step alone, for a case fed by a real pipeline."""
    pipeline = source.examples_per_sec_alone(ALONE_BATCHES)
    if pipeline is None:
        return {"pipeline_examples_per_sec": None, "step_examples_per_sec": None}
    return {"pipeline_examples_per_sec": pipeline,
            "step_examples_per_sec": _step_alone(trainer, spec.steps_per_round, batch_examples)}


def _prove_xla_in_a_round(source: Source, k: int, mode: str) -> dict[str, Any]:
    """Fails the case unless one more round ran XLA as `mode` names (see xla_proof)."""
    from tfperf import xla_proof

    executions = xla_proof.executions_in_one_round(source, k)
    why = xla_proof.problem(mode, {"": executions}, "executions")
    if why:
        raise ConfigurationError(why)
    return {"xla_executions": executions, "xla_compilations_by_task": None}


def _prove_xla_in_tasks(mode: str, compiled: Path, task: str, servers: dict[str, str]
                        ) -> dict[str, Any]:
    """Fails the case unless every task that runs its steps compiled XLA programs as `mode`
    names (see xla_proof: the profiler is unsafe in a cluster's tasks)."""
    from tfperf import xla_proof

    by_task = xla_proof.compilations_by_task(compiled, task, servers)
    why = xla_proof.problem(mode, by_task, "compilations")
    if why:
        raise ConfigurationError(why)
    return {"xla_executions": None, "xla_compilations_by_task": by_task}


def run(spec: protocol.WorkerSpec, channel: IO[str], progress: Progress, started: float,
        compiled: Path) -> None:
    """`compiled` is the folder that counts XLA compilations (see xla_compilations)."""
    import tensorflow as tf

    from tfperf import flops, peak, pipelines, placements, strategies, training, xla_modes
    from tfperf.transfers import per_step as transfers_per_step
    from tfperf.workload import MemoryBound, ModelConfig, load_module

    case = spec.case
    kind = case["device_kind"].upper()
    count = int(case["device_count"])
    workers = int(case["workers"])
    if spec.virtual:
        _split(kind, count, spec.virtual_memory_mb)
    devices = [f"/device:{kind}:{i}" for i in range(count)]
    variable_strategy = strategies.load(case["strategy"])
    settings = strategies.StrategySettings(
        all_reduce=spec.all_reduce,
        parameter_device="host" if case["placement"] == "ps_host" else "device",
        workers=workers,
        resolver=_resolver(spec, workers) if workers > 1 else None)
    described = variable_strategy.describe(devices, settings)
    # Before anything starts TensorFlow's runtime: a multi-worker strategy configures it.
    strategy = variable_strategy.create(devices, settings)
    tf.random.set_seed(spec.seed)
    found = [d.name for d in tf.config.list_logical_devices(kind)]
    if len(found) < count:
        raise ConfigurationError(f"the case needs {count} {kind} devices, TensorFlow has "
                                 f"{len(found)}: {found}")
    workload = load_module(Path(spec.workload_path))
    config = ModelConfig(spec.size, spec.batch_size, case["data_format"], spec.seed)
    # Proof that the strategy is what the case asked for, not only that it was asked for.
    if strategy.num_replicas_in_sync != described["replicas"]:
        raise ConfigurationError(f"{case['strategy']} runs {strategy.num_replicas_in_sync} "
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
    trainer = training.Trainer(
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
    _check_variables(trainer.model, assignment)
    step_graph = trainer.step_graph(spec.batch_size)
    local = _local_device(settings, devices[0])
    copies = placements.copies(step_graph, local)
    layout_ops = _check_layout(step_graph, case["data_format"])
    moved = transfers_per_step(trainer.whole_step_graph(), local)
    source = pipelines.load(case["input"]).build(pipelines.PipelineContext(
        trainer, case["preprocess"] == "device", Path(spec.cache_dir), spec.file_layout))
    # Interpreter up to model and input ready: TensorFlow's import, the build, input files.
    setup_s = time.perf_counter() - started
    flops_per_example = flops.count_graph(step_graph) / spec.batch_size
    # What each round is rated against, timed beside it (see peak): a memory-bound workload's
    # bytes against the copy rate, the others' FLOPs against the matrix-product rate of the
    # dtype the model computes in.
    bandwidth: dict[str, float] = {}
    if isinstance(workload, MemoryBound):
        yardstick = peak.copy(devices[0])
        bandwidth["bytes_per_example"] = workload.bytes_per_example(config)
    else:
        yardstick = peak.matmul(devices[0], tf.as_dtype(trainer.model.compute_dtype))

    progress.enter("compiling")
    k = spec.steps_per_round
    start = time.perf_counter()
    first = source.round(k)
    first_round_s = time.perf_counter() - start
    _check_finite(first.mean_loss, k)
    step_tasks = _step_tasks(settings.resolver, coordinator is not None)
    in_cluster = settings.resolver is not None
    if not in_cluster:
        progress.enter("proving XLA")
        proof = _prove_xla_in_a_round(source, k, case["xla"])
    progress.enter("warming up")
    warm_rounds = []
    for r in range(1, spec.warmup_rounds):
        start = time.perf_counter()
        result = source.round(k)
        warm_rounds.append(time.perf_counter() - start)
        _check_finite(result.mean_loss, (r + 1) * k)
    if in_cluster:
        # After the warm-up, so that auto-clustering has compiled what it will.
        progress.enter("proving XLA")
        proof = _prove_xla_in_tasks(case["xla"], compiled, _task_label(settings.resolver),
                                    step_tasks)
    traces_ready = trainer.traces
    compilations_ready = xla_compilations.count(compiled)
    protocol.send(
        channel,
        protocol.READY,
        setup_s=setup_s,
        first_round_s=first_round_s,
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
        build=_build(),
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
            protocol.send(channel, protocol.YARDSTICK_DONE, rate=yardstick.rate())
            continue
        if command["kind"] == protocol.PROFILE:
            where = Path(command["logdir"]) / _task_name(settings.resolver)
            rounds = _profiled_rounds(source, k, where, step_tasks)
            step += k * len(rounds)
            _check_finite(rounds[-1].mean_loss, step)
            protocol.send(channel, protocol.PROFILED, logdir=str(where), steps=k * len(rounds))
            continue
        if measured_round == spec.retrace_round:
            trainer.force_retrace()
        inject = float(command.get("inject_seconds", 0.0))
        start = time.perf_counter()
        cpu_start = time.process_time()
        result = source.round(k)
        if inject:
            _spin(inject)
        seconds = time.perf_counter() - start
        measured_s += seconds
        measured_cpu_s += time.process_time() - cpu_start
        step += k
        _check_finite(result.mean_loss, step)
        last_loss = result.mean_loss
        protocol.send(channel, protocol.ROUND_DONE, seconds=seconds, loss=result.mean_loss)
        measured_round += 1
    traces_measured = trainer.traces - traces_ready
    compilations_measured = xla_compilations.count(compiled) - compilations_ready
    # After the measured rounds, so that neither figure disturbs them.
    batch_examples = spec.batch_size * trainer.strategy.num_replicas_in_sync
    figures = _input_figures(source, trainer, spec, batch_examples)
    protocol.send(
        channel,
        protocol.FINISHED,
        loss_last=last_loss,
        peak_memory_bytes=_peak_memory(devices[0].replace("/device:", "")),
        # All threads of this process (TF's pools included) over the measured rounds' wall time.
        cpu_cores_busy=measured_cpu_s / measured_s if measured_s else None,
        peak_rss_bytes=_peak_rss(),
        traces_during_measurement=traces_measured,
        compilations_during_measurement=compilations_measured,
        **figures,
    )


def main() -> int:
    started = time.perf_counter()
    without_plotting()
    channel = claim_stdout()
    spec = protocol.WorkerSpec.from_json(sys.stdin.readline())
    progress = Progress(channel)
    compiled = Path(tempfile.mkdtemp(prefix="tfperf-xla-compilations-"))
    xla_compilations.enable(os.environ, compiled)
    try:
        run(spec, channel, progress, started, compiled)
    except Exception as error:
        traceback.print_exc()
        protocol.send(
            channel,
            protocol.FAILED,
            failure=classify(error, progress.phase),
            message=in_one_line(error),
            phase=progress.phase,
        )
        return 1
    finally:
        shutil.rmtree(compiled, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
