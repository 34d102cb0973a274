"""Measure the noise floors that XLA equivalence tolerances are set from, and XLA's differences.

For each workload, data format, precision and seed, at batch 8 and 4 SGD steps (the `ci`
profile's largest example), from identical initial weights on identical batches:

- order floor: non-XLA run vs the same run with the examples of each batch reversed (the same
  maths in another order);
- float64 floor: non-XLA run vs a float64 non-XLA run (the rounding error of the precision);
- XLA: the `jit` and `auto` arms vs the non-XLA run (what the check compares).

All as in the check: loss relative per step, gradients and weights norm-wise relative over the
whole model. It prints a table and, per precision, the largest floor and 10x it: the
tolerances in tfperf/numerics/tolerances.py come from this output.

    python benchmarks/xla_noise_floor.py [--precisions=fp32,mixed_bf16] [WORKLOAD_FILE ...]

mixed_fp16 without XLA runs about 35x slower than fp32 on CPU (../shared/TF-NOTES.md): on a
CPU machine measure it on the tiny test CNN only, e.g.
    python benchmarks/xla_noise_floor.py --precisions=fp32,mixed_bf16 workloads/resnet20.py
    python benchmarks/xla_noise_floor.py tests/workloads/tinycnn.py
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from lab import ROOT

from tfperf.equivalence.arms import ArmWorkers
from tfperf.numerics.compare import ArmSpec, Differences, differences
from tfperf.workload import load_module

DEFAULT = [ROOT / "workloads" / "resnet20.py", ROOT / "tests" / "workloads" / "tinycnn.py"]
SEEDS = (0, 1)
BATCH, STEPS = 8, 4
SAFETY = 10


def _fmt(d: Differences | None) -> str:
    if d is None:
        return f"{'n/a':>26}"
    if d.non_finite:
        return "non-finite"
    return f"{d.loss:8.1e} {d.gradients:8.1e} {d.weights:8.1e}"


def main() -> None:
    args = sys.argv[1:]
    chosen = next((a.partition("=")[2].split(",") for a in args
                   if a.startswith("--precisions=")), None)
    paths = [Path(p).resolve() for p in args if not p.startswith("--")] or DEFAULT
    floors: dict[str, list[float]] = {}
    xla_worst: dict[tuple[str, str], list[float]] = {}
    print(f"{'workload':10} {'fmt':4} {'precision':10} seed | order floor (loss grad w) | "
          "float64 floor (loss grad w) | jit vs off | auto vs off")
    with tempfile.TemporaryDirectory() as tmp:
        runner = ArmWorkers(Path(tmp), Path(tmp), timeout_s=900, gpu=False)
        try:
            for path in paths:
                workload = load_module(path)
                for fmt in workload.data_formats:
                    for seed in SEEDS:
                        base = ArmSpec(workload.name, "tiny", BATCH, fmt, "fp32", seed, STEPS, "off")
                        first = runner.run(base, path)
                        # float64 convolution gradients exist in NHWC only on CPU.
                        f64 = runner.run(replace(base, precision="fp64"), path, first.path) \
                            if fmt == "NHWC" else None
                        for precision in workload.precisions:
                            if chosen and precision not in chosen:
                                continue
                            spec = replace(base, precision=precision)
                            off = runner.run(spec, path, first.path)
                            order = differences(off.trajectory, runner.run(
                                replace(spec, permute=True), path, first.path).trajectory)
                            exact = differences(f64.trajectory, off.trajectory) \
                                if f64 else None
                            arms = [differences(off.trajectory, runner.run(
                                replace(spec, xla=x), path, first.path).trajectory)
                                for x in ("jit", "auto")]
                            print(f"{workload.name:10} {fmt:4} {precision:10} {seed:4} | "
                                  f"{_fmt(order)} | {_fmt(exact)} | {_fmt(arms[0])} | "
                                  f"{_fmt(arms[1])}", flush=True)
                            for kind in ("loss", "gradients", "weights"):
                                floors.setdefault(f"{precision} {kind}", []).extend(
                                    getattr(d, kind) for d in (order, exact) if d is not None)
                                xla_worst.setdefault((f"{precision} {kind}", workload.name),
                                                     []).extend(getattr(a, kind) for a in arms)
        finally:
            runner.close()
    print(f"\nper precision: largest floor, {SAFETY}x it, largest XLA difference per workload")
    for key, values in floors.items():
        seen = ", ".join(f"{w} {max(v):.1e}" for (k, w), v in xla_worst.items() if k == key)
        print(f"{key:22} floor {max(values):.1e}  x{SAFETY} {SAFETY * max(values):.1e}  "
              f"XLA: {seen}")


if __name__ == "__main__":
    main()
