"""How far an XLA arm may differ from the non-XLA arm: the one place the tolerances live.

Each is 10x the largest noise floor measured by `python benchmarks/xla_noise_floor.py` on the
2-core CPU (batch 8, 4 SGD steps, seeds 0 and 1, both data formats; 2026-11-22), the floor
being the larger of two differences between non-XLA runs: (a) the same run with the examples
of each batch reversed (the same maths in another order) and (b) the run against a float64 run
(NHWC only: float64 convolution gradients do not exist in NCHW on CPU). Relative per step for
the loss; norm-wise relative over the whole model for first-step gradients and final weights.

Floors (loss / gradients / weights) they were set from:
  resnet20 fp32        4.1e-3 / 1.1e-2 / 6.3e-3  (NCHW seed 0, order; NHWC seed 1: 4e-4/3e-6/9e-4)
  resnet20 mixed_bf16  2.3e-2 / 2.9e-1 / 1.7e-2  (bf16 rounding through 20 layers at batch 8)
  tinycnn  fp32        9.3e-8 / 7.4e-7 / 7.5e-8
  tinycnn  mixed_bf16  3.4e-4 / 4.3e-3 / 4.8e-4
  tinycnn  mixed_fp16  3.5e-5 / 2.3e-4 / 3.1e-5
mixed_fp16 was not measured for resnet20: without XLA it trains ~35x slower on CPU. A workload
or precision without its own entry gets the loosest measured one of its precision; measure it
(the benchmark takes workload files) and add a line here.
"""

from __future__ import annotations

from dataclasses import dataclass

SAFETY = 10


@dataclass(frozen=True)
class Tolerance:
    loss: float  # relative, per step
    gradients: float  # norm-wise relative over the model, first step
    weights: float  # norm-wise relative over the model, after the last step

    @classmethod
    def from_floor(cls, loss: float, gradients: float, weights: float) -> Tolerance:
        return cls(SAFETY * loss, SAFETY * gradients, SAFETY * weights)


MEASURED: dict[tuple[str, str], Tolerance] = {
    ("resnet20", "fp32"): Tolerance.from_floor(4.1e-3, 1.1e-2, 6.3e-3),
    ("resnet20", "mixed_bf16"): Tolerance.from_floor(2.3e-2, 2.9e-1, 1.7e-2),
    ("tinycnn", "fp32"): Tolerance.from_floor(9.3e-8, 7.4e-7, 7.5e-8),
    ("tinycnn", "mixed_bf16"): Tolerance.from_floor(3.4e-4, 4.3e-3, 4.8e-4),
    ("tinycnn", "mixed_fp16"): Tolerance.from_floor(3.5e-5, 2.3e-4, 3.1e-5),
}


def tolerance(workload: str, precision: str) -> Tolerance:
    measured = MEASURED.get((workload, precision))
    if measured is not None:
        return measured
    same_precision = [t for (_, p), t in MEASURED.items() if p == precision]
    if not same_precision:
        raise KeyError(f"no XLA equivalence tolerance measured for precision {precision!r}")
    return Tolerance(max(t.loss for t in same_precision),
                     max(t.gradients for t in same_precision),
                     max(t.weights for t in same_precision))
