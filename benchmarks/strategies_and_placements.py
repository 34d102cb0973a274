"""The seeds' multi-device experiment on this machine: ResNet-20 and DeepCoNN at tiny size on
one CPU device, on 2 logical CPU devices and on 2 worker processes (one CPU device each), for
every strategy and placement that applies: examples/s, device-to-device copies per step,
scaling efficiency.

Runs the real suite (one pytest session per repeat) and prints medians over the repeats.

    python benchmarks/strategies_and_placements.py [REPEATS]
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict
from typing import Any

from lab import sessions

ARGS = ["--perf-tier=full", "--perf-size=tiny", "--perf-only=workload=resnet20,deepconn",
        "--perf-only=device_kind=cpu", "--perf-only=device_count=1,2", "--perf-only=xla=off",
        "--perf-only=data_format=NHWC", "--perf-only=precision=fp32",
        "--perf-only=input=synthetic", "--perf-only=workers=1,2",
        "--perf-only=strategy=single,replicated,parameter_server,distributed_replicated",
        "--perf-rounds=5", "--perf-steps-per-round=10"]


def session() -> list[dict[str, Any]]:
    done = sessions.measure(["perf/test_training.py", *ARGS])
    if done.benchmarks is None:
        sys.exit(f"pytest wrote no results (exit {done.code}):\n{done.stdout[-3000:]}")
    return done.benchmarks


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    runs: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for _ in range(repeats):
        for info in session():
            runs[info["case_id"]].append(info)
    print(f"tiny size, fp32, NHWC, synthetic input, xla off; medians of {repeats} sessions")
    print(f"{'workload':<9} {'devices':<9} {'workers':>7} {'strategy':<22} {'placement':<13} {'ex/s':>8} "
          f"{'copies/step':>11} {'MB/step':>8} {'all-reduces':>11} {'MB/step':>8} {'scaling':>8}")
    for case_id in sorted(runs, key=lambda c: (runs[c][0]["workload"], c)):
        infos = runs[case_id]
        first = infos[0]
        eps = statistics.median(i["examples_per_sec"] for i in infos)
        scaling = [i["scaling_efficiency"] for i in infos if i.get("scaling_efficiency")]
        # Model-parallel copies, from the replica's forward and backward; the strategy's own
        # traffic (parameter-server copies, all-reduces) from the whole step's graph.
        copies = first["copies_per_step"]
        if not copies["count"]:
            copies = first["transfers_per_step"]["copies"]
        reduces = first["transfers_per_step"]["all_reduce"]
        devices = ("virtual " if first["virtual"] else "") + first["device_count"]
        print(f"{first['workload']:<9} {devices:<9} {first['workers']:>7} {first['strategy']:<22} "
              f"{first['placement']:<13} {eps:>8.1f} {copies['count']:>11} "
              f"{copies['bytes'] / 1e6:>8.2f} {reduces['count']:>11} {reduces['bytes'] / 1e6:>8.2f} "
              f"{format(statistics.median(scaling), '.2f') if scaling else '':>8}")


if __name__ == "__main__":
    main()
