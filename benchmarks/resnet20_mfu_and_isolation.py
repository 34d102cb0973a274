"""Measure ResNet-20's MFU (fp32, NHWC, batch 64 and 128) and the cost of worker isolation.

Runs the real suite REPEATS times per batch size (one pytest session each) and prints the
median over sessions of: examples/s, MFU, and isolation overhead (round time seen by pytest
over round time seen inside the worker, minus one).

    python benchmarks/resnet20_mfu_and_isolation.py [REPEATS]
"""

from __future__ import annotations

import statistics
import sys

from lab import sessions

CASE = ["--perf-only=workload=resnet20", "--perf-only=device_kind=cpu", "--perf-only=device_count=1",
        "--perf-only=xla=off", "--perf-only=data_format=NHWC", "--perf-only=strategy=single",
        "--perf-only=precision=fp32", "--perf-only=input=synthetic", "--perf-rounds=10",
        "--perf-steps-per-round=10", "--perf-warmup-rounds=2"]


def one_session(batch: int) -> dict[str, float]:
    done = sessions.measure(["perf/test_training.py", *CASE, f"--perf-batch-size={batch}"])
    if done.code != 0 or not done.benchmarks:
        sys.exit(f"the batch {batch} session failed:\n{done.stdout[-3000:]}")
    info = done.benchmarks[0]
    return {k: float(info[k]) for k in ("examples_per_sec", "mfu", "isolation_overhead")}


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    for batch in (64, 128):
        runs = [one_session(batch) for _ in range(repeats)]
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        print(f"batch {batch}: {repeats} sessions, medians: {med['examples_per_sec']:.1f} ex/s, "
              f"MFU {med['mfu']:.1%}, isolation overhead {med['isolation_overhead']:+.3%} "
              f"(per session MFU: {', '.join(format(r['mfu'], '.1%') for r in runs)})")


if __name__ == "__main__":
    main()
