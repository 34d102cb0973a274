"""What a competing process does to the yardstick bursts, and to the rounds beside them.

Issue 37's impossible figure: MFU 147.6% for resnet56 on a 2-vCPU Xeon, whose matrix-product
bursts read 98 GFLOP/s while the rounds beside them ran as fast as ever. This runs the real
suite (one pytest session per run, resnet56's smoke case unless --case says otherwise) while a
competitor of one kind runs on the machine, each in a session of its own as an unrelated job
would be:

- none:          nothing else runs;
- spin1, spin2:  one or two Python busy loops (scalar work, no vector units);
- numpy1:        one single-threaded float32 matrix product after another (vector units and
                 caches, as another numerical job);
- tf2:           a TensorFlow process multiplying 2048-square matrices on both cores, as a
                 second training job or a second suite would;
- pulse2:        two busy loops for 0.2 s of every second (a job that wakes now and then).

For each kind it prints the medians over runs of: the bursts' rate and their share of the cores'
time (protocol.Burst), the rounds' time, MFU as
the suite rates it (each round against the faster burst beside it) and as a rate taken before
each round alone would, with both slowdowns relative to `none` and the flags the suite raised.
MFU rises above what the workload does exactly when the bursts lose more than the rounds.

    python benchmarks/yardstick_disturbance.py                       # 3 runs of each kind
    python benchmarks/yardstick_disturbance.py --runs 5 --kinds none,tf2
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
from pathlib import Path

from lab import sessions

CASE = "resnet56-cpu1-workers1-xla_off-NHWC-default-single-fp32-synthetic-prep_host"

_SPIN = "while True: pass"
_PULSE = ("import time\n"
          "while True:\n"
          "    end = time.perf_counter() + 0.2\n"
          "    while time.perf_counter() < end: pass\n"
          "    time.sleep(0.8)\n")
_NUMPY = ("import numpy as np\n"
          "a = np.random.default_rng(0).random((1024, 1024), dtype=np.float32)\n"
          "while True: a @ a\n")
_TF = ("import tensorflow as tf\n"
       "a = tf.random.normal((2048, 2048)) / 2048**0.5\n"
       "f = tf.function(lambda: tf.reduce_sum(tf.matmul(a, a)))\n"
       "while True: f().numpy()\n")
KINDS: dict[str, list[str]] = {
    "none": [],
    "spin1": [_SPIN],
    "spin2": [_SPIN, _SPIN],
    "numpy1": [_NUMPY],
    "tf2": [_TF],
    "pulse2": [_PULSE, _PULSE],
}


def _competitors(kind: str) -> list[subprocess.Popen[bytes]]:
    # One thread of BLAS for numpy1, so that it takes one core; TensorFlow keeps its default
    # pools (both cores), as a second job would.
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "TF_CPP_MIN_LOG_LEVEL": "3"}
    return [subprocess.Popen([sys.executable, "-c", code], env=env, start_new_session=True,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for code in KINDS[kind]]


def one_run(case: str, kind: str) -> dict[str, float]:
    competitors = _competitors(kind)
    try:
        done = sessions.measure(["perf/test_training.py", "-k", case])
        if done.code != 0 or not done.benchmarks:
            sys.exit(f"the {kind} run failed:\n{done.stdout[-3000:]}")
        info = done.benchmarks[0]
    finally:
        for process in competitors:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    bursts = [float(x) for x in info["peak_flops_per_device_by_round"]]
    rounds = [float(x) for x in info["worker_round_s"]]
    flops_per_round = float(info["flops_per_example"]) * int(info["batch_size"]) \
        * int(info["steps_per_round"])
    before = statistics.median(flops_per_round / t / b
                               for t, b in zip(rounds, bursts[:len(rounds)], strict=True))
    shares = [float(x) for x in info.get("yardstick_cpu_share_by_round") or []]
    return {"burst": statistics.median(bursts), "burst_min": min(bursts),
            "share": statistics.median(shares) if shares else float("nan"),
            "burst_max": max(bursts), "round": statistics.median(rounds),
            "mfu": float(info["mfu"]), "mfu_before": before,
            "flagged": float(bool(info["figures_flagged"]))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of each kind (default 3)")
    parser.add_argument("--kinds", default=",".join(KINDS),
                        help=f"comma-separated competitors, of {', '.join(KINDS)}")
    parser.add_argument("--case", default=CASE, help=f"the case id (default {CASE})")
    parser.add_argument("--json", type=Path, help="also write every run's figures here")
    args = parser.parse_args()
    kinds = args.kinds.split(",")
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or args.runs < 1:
        sys.exit(f"--kinds takes {', '.join(KINDS)} (got {', '.join(unknown)}); --runs >= 1")
    # Kinds interleaved run by run, so that a drift of the machine spreads over all of them.
    results: dict[str, list[dict[str, float]]] = {k: [] for k in kinds}
    for i in range(args.runs):
        for kind in kinds:
            results[kind].append(one_run(args.case, kind))
            print(f"run {i} {kind}: {results[kind][-1]}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))

    def med(kind: str, key: str) -> float:
        return statistics.median(r[key] for r in results[kind])

    print(f"\n{args.case}, {args.runs} runs of each kind, medians over runs")
    print("kind     burst GFLOP/s (min-max)   CPU share  round s   burst slower  round slower"
          "  MFU (suite)  MFU (burst before)  runs flagged")
    for kind in kinds:
        slower = (f"{med('none', 'burst') / med(kind, 'burst'):.2f}x",
                  f"{med(kind, 'round') / med('none', 'round'):.2f}x") \
            if "none" in results else ("", "")
        flagged = int(sum(r["flagged"] for r in results[kind]))
        lows = min(r["burst_min"] for r in results[kind]) / 1e9
        highs = max(r["burst_max"] for r in results[kind]) / 1e9
        print(f"{kind:8} {med(kind, 'burst') / 1e9:6.0f} ({lows:.0f}-{highs:.0f})"
              f"{'':5} {med(kind, 'share'):9.2f}  {med(kind, 'round'):7.3f}"
              f"   {slower[0]:>12}  {slower[1]:>12}"
              f"  {med(kind, 'mfu'):10.1%}  {med(kind, 'mfu_before'):18.1%}"
              f"  {flagged}/{len(results[kind])}")


if __name__ == "__main__":
    main()
