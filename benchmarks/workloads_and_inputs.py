"""Every workload at its tiny size on this machine's CPU (fp32, NHWC, synthetic input), and
what each input pipeline costs ResNet-20: the tables the workloads issue asks for.

Runs the real suite (one pytest session per repeat, workers and all) and prints medians over
the repeats of: examples/s, MFU (for fused_elementwise: achieved bytes/s as a fraction of the
copy rate measured in the same session), compile time and time to first step; then, for
ResNet-20, each pipeline's training throughput as a fraction of the step alone on
device-resident batches, measured in the same worker (a ratio from one run, not across runs).

    python benchmarks/workloads_and_inputs.py [REPEATS]
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict
from typing import Any

from lab import sessions

COMMON = ["--perf-tier=nightly", "--perf-size=tiny", "--perf-only=device_kind=cpu",
          "--perf-only=device_count=1", "--perf-only=data_format=NHWC",
          "--perf-only=strategy=single", "--perf-only=precision=fp32",
          "--perf-only=placement=default", "--perf-warmup-rounds=2", "--perf-rounds=5",
          "--perf-steps-per-round=10"]
SESSIONS = {
    # Every workload on device-resident batches.
    "workloads": ["--perf-only=input=synthetic", "--perf-only=xla=off"],
    # The seeds' fusion example where it is meant to run: under XLA.
    "fused_xla": ["--perf-only=input=synthetic", "--perf-only=workload=fused_elementwise",
                  "--perf-only=xla=jit"],
    # ResNet-20 through every pipeline and preprocessing placement (few large files).
    "few_large": ["--perf-tfrecord-files=few_large", "--perf-only=workload=resnet20",
                  "--perf-only=input=tfrecord,feed", "--perf-only=xla=off"],
    # The small-files layout the seeds warn about.
    "many_small": ["--perf-tfrecord-files=many_small", "--perf-only=workload=resnet20",
                   "--perf-only=input=tfrecord", "--perf-only=xla=off"],
}


def session(extra: list[str]) -> list[dict[str, Any]]:
    done = sessions.measure(["perf/test_training.py", *COMMON, *extra])
    if done.benchmarks is None:
        sys.exit(f"pytest wrote no results (exit {done.code}):\n{done.stdout[-3000:]}")
    return done.benchmarks


def median(values: list[Any]) -> float | None:
    numbers = [float(v) for v in values if v is not None]
    return statistics.median(numbers) if numbers else None


def fmt(value: float | None, spec: str) -> str:
    return "" if value is None else format(value, spec)


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    runs: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for _ in range(repeats):
        for layout, extra in SESSIONS.items():
            for info in session(extra):
                runs[(layout, info["case_id"])].append(info)

    def med(key: tuple[str, str], field: str) -> float | None:
        return median([info.get(field) for info in runs[key]])

    print(f"Workloads, tiny size, CPU, fp32, NHWC, synthetic input; medians of {repeats} sessions;"
          " MFU and the copy-rate fraction are each round's against the yardstick timed beside it")
    print(f"{'workload':<18} {'xla':<4} {'batch':>5} {'ex/s':>9} {'MFU':>6} {'of copy rate':>12} "
          f"{'compile s':>9} {'first step s':>12}")
    for key in sorted(k for k in runs if k[0] in ("workloads", "fused_xla")):
        info = runs[key][0]
        print(f"{info['workload']:<18} {info['xla']:<4} {info['batch_size']:>5} "
              f"{fmt(med(key, 'examples_per_sec'), '.1f'):>9} {fmt(med(key, 'mfu'), '.1%'):>6} "
              f"{fmt(med(key, 'fraction_of_copy_rate'), '.1%'):>12} "
              f"{fmt(med(key, 'compile_s'), '.2f'):>9} "
              f"{fmt(med(key, 'time_to_first_step_s'), '.2f'):>12}")

    print("\nResNet-20 input pipelines: training ex/s as a fraction of the step alone (same worker)")
    print(f"{'input':<10} {'preprocess':<10} {'files':<10} {'ex/s':>8} {'step alone':>10} "
          f"{'fraction':>8} {'pipeline alone':>14} {'input-bound':>11}")
    for key in sorted(k for k in runs if k[0] != "workloads" and k[1].startswith("resnet20-")):
        info = runs[key][0]
        files = key[0] if info["input"] == "tfrecord" else ""
        bound = [i["input_bound"] for i in runs[key]]
        print(f"{info['input']:<10} {info['preprocess']:<10} {files:<10} "
              f"{fmt(med(key, 'examples_per_sec'), '.1f'):>8} "
              f"{fmt(med(key, 'step_examples_per_sec'), '.1f'):>10} "
              f"{fmt(med(key, 'fraction_of_step_alone'), '.2f'):>8} "
              f"{fmt(med(key, 'pipeline_examples_per_sec'), '.0f'):>14} "
              f"{sum(bool(b) for b in bound)}/{len(bound):>9}")


if __name__ == "__main__":
    main()
