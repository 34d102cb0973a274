"""How a workload's step time grows with its batch: the per-step cost that does not shrink
with a smaller batch, and the MFU each batch size can reach because of it.

Each session is a fresh process. It builds one Trainer per batch size (the suite's own, fp32,
the workload's first data format, synthetic input, one CPU device) and times --rounds rounds of
--steps steps at every size in turn, so that a slow stretch of a shared machine hits all sizes
alike. Before each round it times the suite's matrix-product burst, as a case does, and rates
the round against it. Per session it fits the median step time to `fixed + per_example * batch`
by least squares. It prints, as medians over sessions: per batch size the step time, examples/s
and MFU; the fit; and the MFU each batch size would have without the fixed part.

On the 2-core CPU, ResNet-20's fixed part measured 20-32 ms a step (two single sessions and the
median of three; single sessions ranged 20-55 ms), about a sixth of the step at batch 64 and a
twentieth at 256. Without it, batch 64 would read 57-59% MFU. It is not the optimizer's update
(0.7 ms a step alone). With the update left out, consecutive steps overlap and the fixed part
falls to 12-13 ms: most of it is the wait along the step's chain of about 100 oneDNN kernels
(convolutions and batch norms, forward and backward), each split over both cores.

    python benchmarks/batch_scaling.py                       # resnet20, batches 32-256, 3 sessions
    python benchmarks/batch_scaling.py --workload resnet56 --batches 32,64,128 --sessions 5
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

import numpy as np
from lab import ROOT

WORKLOADS = ROOT / "workloads"


def child(workload_name: str, batches: list[int], rounds: int, steps: int) -> None:
    """One session: interleaved rounds at every batch size; prints JSON per batch size."""
    import tensorflow as tf

    from tfperf.worker import strategies
    from tfperf.worker.telemetry import yardsticks
    from tfperf.worker.training import loop
    from tfperf.workload import ModelConfig, load_module

    workload = load_module(WORKLOADS / f"{workload_name}.py")
    strategy = strategies.load("single").create(["/cpu:0"], strategies.StrategySettings())
    trainers = {batch: loop.Trainer(
        workload, ModelConfig("tiny", batch, workload.data_formats[0], seed=0), strategy,
        "/cpu:0", jit_compile=False) for batch in batches}
    flops = {batch: trainer.flops_per_example(batch) for batch, trainer in trainers.items()}
    yardstick = yardsticks.matmul("/cpu:0", tf.float32)
    for trainer in trainers.values():  # tracing and warm caches, as a case's warm-up rounds
        trainer.run_round(steps)
        trainer.run_round(steps)
    seconds: dict[int, list[float]] = {batch: [] for batch in batches}
    mfu: dict[int, list[float]] = {batch: [] for batch in batches}
    for _ in range(rounds):
        for batch, trainer in trainers.items():
            rate, _ = yardstick.rate()
            start = time.perf_counter()
            trainer.run_round(steps)
            step = (time.perf_counter() - start) / steps
            seconds[batch].append(step)
            mfu[batch].append(batch * flops[batch] / step / rate)
    print(json.dumps({batch: {"step_s": statistics.median(seconds[batch]),
                              "mfu": statistics.median(mfu[batch])} for batch in batches}))


def fit(steps: dict[int, float]) -> tuple[float, float]:
    """(fixed seconds per step, seconds per example) of a least-squares line."""
    per_example, fixed = np.polyfit(list(steps), list(steps.values()), 1)
    return float(fixed), float(per_example)


def report(sessions: list[dict[int, dict[str, float]]]) -> list[str]:
    batches = sorted(sessions[0])
    fits = [fit({b: s[b]["step_s"] for b in batches}) for s in sessions]
    fixed = statistics.median(f[0] for f in fits)
    lines = [f"{len(sessions)} sessions; medians over sessions"]
    for batch in batches:
        step = statistics.median(s[batch]["step_s"] for s in sessions)
        mfu = statistics.median(s[batch]["mfu"] for s in sessions)
        # A noisy fit can put the fixed part above a small batch's whole step: no figure then.
        without = f"{mfu * step / (step - fixed):.1%}" if step > fixed else "n/a (fit noisy)"
        lines.append(f"batch {batch:4d}: step {step * 1e3:7.1f} ms, {batch / step:8.1f} ex/s, "
                     f"MFU {mfu:.1%}, without the fixed part {without}")
    lines.append(f"fit: {fixed * 1e3:.1f} ms a step fixed + "
                 f"{statistics.median(f[1] for f in fits) * 1e3:.3f} ms an example "
                 f"(per session fixed: {', '.join(f'{f[0] * 1e3:.1f}' for f in fits)} ms)")
    return lines


def _batches(text: str) -> list[int]:
    try:
        values = sorted({int(v) for v in text.split(",")})
    except ValueError:
        values = []
    if len(values) < 2 or values[0] < 1:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give at least two positive batch sizes, comma-separated (e.g. 32,64,128)")
    return values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workload", default="resnet20")
    parser.add_argument("--batches", type=_batches, default=[32, 64, 128, 256])
    parser.add_argument("--sessions", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not (WORKLOADS / f"{args.workload}.py").is_file():
        parser.error(f"--workload: no workloads/{args.workload}.py")
    if args.sessions < 1 or args.rounds < 3 or args.steps < 1:
        parser.error("--sessions needs at least 1, --rounds at least 3, --steps at least 1")
    if args.child:
        child(args.workload, args.batches, args.rounds, args.steps)
        return
    sessions = []
    for i in range(args.sessions):
        done = subprocess.run(
            [sys.executable, __file__, "--child", f"--workload={args.workload}",
             f"--batches={','.join(map(str, args.batches))}", f"--rounds={args.rounds}",
             f"--steps={args.steps}"], cwd=ROOT, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"session {i + 1} failed:\n{done.stderr[-3000:]}")
        result = json.loads(done.stdout.strip().splitlines()[-1])
        sessions.append({int(batch): figures for batch, figures in result.items()})
        print(f"session {i + 1} done", flush=True)
    print("\n".join(report(sessions)))


if __name__ == "__main__":
    main()
