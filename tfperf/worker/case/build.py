"""Build a case: its devices and strategy, the model and its training step, the input pipeline
and the yardstick each round is rated against, each checked to be what the case names."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import keras
import tensorflow as tf

from tfperf.cases import xla_modes
from tfperf.processes.protocol import WorkerSpec
from tfperf.worker import pipelines, placements, strategies
from tfperf.worker.proofs import case_checks, topology
from tfperf.worker.proofs.transfers import per_step as transfers_per_step
from tfperf.worker.telemetry import step_flops, yardsticks
from tfperf.worker.training import loop
from tfperf.workload import MemoryBound, ModelConfig, load_module


@dataclass
class Built:
    """A case ready for its first round, and what its READY message tells of how it was built."""

    devices: list[str]  # the case's, as TensorFlow names them
    settings: strategies.StrategySettings
    trainer: loop.Trainer
    source: pipelines.Source
    yardstick: yardsticks.Yardstick
    step_tasks: dict[str, str]  # the remote tasks that run the steps: a coordinator's workers
    setup_s: float  # interpreter up to model and input ready
    told: dict[str, Any]  # for READY


def case(spec: WorkerSpec, started: float) -> Built:
    cased = spec.case
    kind = cased["device_kind"].upper()
    count = int(cased["device_count"])
    workers = int(cased["workers"])
    if spec.virtual:
        topology.split_device(kind, count, spec.virtual_memory_mb)
    devices = [f"/device:{kind}:{i}" for i in range(count)]
    variable_strategy = strategies.load(cased["strategy"])
    settings = strategies.StrategySettings(
        all_reduce=spec.all_reduce,
        parameter_device="host" if cased["placement"] == "ps_host" else "device",
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
        raise case_checks.ConfigurationError(f"the case needs {count} {kind} devices, TensorFlow "
                                             f"has {len(found)}: {found}")
    workload = load_module(Path(spec.workload_path))
    config = ModelConfig(spec.size, spec.batch_size, cased["data_format"], spec.seed)
    # Proof that the strategy is what the case asked for, not only that it was asked for.
    if strategy.num_replicas_in_sync != described["replicas"]:
        raise case_checks.ConfigurationError(
            f"{cased['strategy']} runs {strategy.num_replicas_in_sync} replicas, the case asked "
            f"for {described['replicas']}")
    coordinator = variable_strategy.coordinator(strategy) \
        if isinstance(variable_strategy, strategies.Coordinated) else None
    placement = placements.load(cased["placement"])
    assignment: dict[str, str] = {}

    def place(model: Any) -> dict[str, str]:
        assignment.update(placement.assign(model, workload, devices))
        return assignment

    # Ops must run exactly where a model-parallel placement puts them: with soft placement
    # off, TensorFlow fails rather than quietly moving them.
    tf.config.set_soft_device_placement(cased["placement"] in ("default", "ps_host"))
    trainer = loop.Trainer(workload, config, strategy, devices[0],
                           xla_modes.MODES[cased["xla"]].jit_compile, cased["precision"],
                           remote_variables=variable_strategy.remote_variables, place=place,
                           coordinator=coordinator)
    case_checks.check_variables(trainer.model, assignment)
    step_graph = trainer.step_graph(spec.batch_size)
    local = topology.local_device(settings, devices[0])
    copies = placements.copies(step_graph, local)
    layout_ops = case_checks.check_layout(step_graph, cased["data_format"])
    moved = transfers_per_step(trainer.whole_step_graph(), local)
    source = pipelines.load(cased["input"]).build(pipelines.PipelineContext(
        trainer, cased["preprocess"] == "device", Path(spec.cache_dir), spec.file_layout))
    setup_s = time.perf_counter() - started
    # What each round is rated against, timed beside it (see peak): a memory-bound workload's
    # bytes against the copy rate, the others' FLOPs against the matrix-product rate of the
    # dtype the model computes in.
    told: dict[str, Any] = {
        "flops_per_example": step_flops.count_graph(step_graph) / spec.batch_size,
        "devices": found, "strategy": described, "placed_layers": len(assignment),
        "copies_per_step": {"count": copies.count, "bytes": copies.bytes},
        "transfers_per_step": moved, "layout_ops": layout_ops}
    if isinstance(workload, MemoryBound):
        yardstick = yardsticks.copy(devices[0])
        told["bytes_per_example"] = workload.bytes_per_example(config)
    else:
        yardstick = yardsticks.matmul(devices[0], tf.as_dtype(trainer.model.compute_dtype))
    return Built(devices, settings, trainer, source, yardstick,
                 topology.step_tasks(settings.resolver, coordinator is not None), setup_s, told)
