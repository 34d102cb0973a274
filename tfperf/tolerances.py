"""How far an XLA arm may differ from the non-XLA arm, per precision: the one place they live.

Set from noise floors measured by `python benchmarks/xla_noise_floor.py` (see its docstring
and README "XLA equivalence"): the worst difference between two non-XLA runs that differ only
in the order of examples within each batch, over every workload, data format and seed tried,
times a safety factor of 10 (XLA fuses and reorders far more than a permutation does).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Tolerance:
    loss: float  # relative, per step
    gradients: float  # norm-wise relative, per variable, first step
    weights: float  # norm-wise relative, per variable, after the last step


TOLERANCES: dict[str, Tolerance] = {
    "fp32": Tolerance(loss=1e-4, gradients=1e-3, weights=1e-4),
    "mixed_bf16": Tolerance(loss=5e-2, gradients=2e-1, weights=2e-2),
    "mixed_fp16": Tolerance(loss=1e-2, gradients=5e-2, weights=5e-3),
}
