"""XLA equivalence, worker side: train one arm and save what it did (tfperf/numerics/compare.py).

The arm trains through the same Trainer as a measured case, so the equivalence covers the code
whose speed the suite reports. The whole arm is profiled, so the caller learns how many XLA
executions really happened (tfperf/worker/proofs/xla_trace.py).
"""

from __future__ import annotations

from pathlib import Path

import keras
import numpy as np

from tfperf.cases.xla_modes import MODES
from tfperf.numerics import compare
from tfperf.worker import strategies
from tfperf.worker.proofs import xla_trace
from tfperf.worker.training import loop
from tfperf.worker.xla_arms.numeric_faults import FaultyWorkload, ScaledLoss
from tfperf.workload import ModelConfig, Workload, load_module


def run(spec: compare.ArmSpec, workload_path: Path, out: Path,
        initial: Path | None) -> xla_trace.XlaActivity:
    # A fresh Keras session per arm: the same layer names, the same seeded initial weights.
    # Without its full garbage collection: 0.17 s of CPU a call with TensorFlow loaded, 11 s
    # over the self-tests' arms, and an arm server's process ends after its few arms anyway.
    keras.backend.clear_session(free_memory=False)
    keras.utils.set_random_seed(spec.seed)
    workload: Workload = load_module(workload_path)
    if spec.fault:
        workload = FaultyWorkload(workload, spec.fault)
    if spec.perturb:
        workload = ScaledLoss(workload, spec.perturb)
    config = ModelConfig(spec.size, spec.batch_size, spec.data_format, spec.seed)
    # Started from another arm's file: its weights and its very batches, whatever this
    # process's NumPy or TensorFlow would have made of the seed.
    start = compare.Trajectory.load(initial) if initial is not None else None
    made = start.batches if start is not None else workload.make_batches(config, spec.steps)
    features, labels = made
    if spec.permute:
        features, labels = features[:, ::-1].copy(), labels[:, ::-1].copy()
    with xla_trace.traced() as activity:
        trainer = loop.Trainer(
            workload, config,
            strategies.load("single").create([spec.device], strategies.StrategySettings()),
            spec.device, MODES[spec.xla].jit_compile, spec.precision, batches=(features, labels))
        variables = trainer.model.weights
        if start is not None:
            for variable, value in zip(variables, start.initial, strict=True):
                variable.assign(np.asarray(value).astype(variable.dtype))
        names = [variable.path for variable in variables]
        initial_values = [np.asarray(variable.numpy()) for variable in variables]
        _, grads = trainer.gradients(0)
        gradients = {id(v): np.asarray(g.numpy(), dtype=np.float32)
                     for v, g in zip(trainer.model.trainable_variables, grads, strict=True)}
        losses = [trainer.run_round(1).first_loss for _ in range(spec.steps)]
    compare.save(
        out, losses, names, initial_values,
        # Non-trainable variables (moving averages) have no gradient: zeros compare equal.
        [gradients.get(id(v), np.zeros(v.shape, np.float32)) for v in variables],
        [np.asarray(variable.numpy()) for variable in variables],
        made,
    )
    return activity
