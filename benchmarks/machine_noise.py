"""How noisy is this machine for the gate? The least slowdown it can catch, and why.

Runs --sessions fresh processes (a process is what a session's worker is). Each trains the
workload at its tiny size through the harness's Trainer, and times --rounds rounds of --steps
steps. After each round it times a small numpy matrix product (no TensorFlow, so a TensorFlow
regression cannot hide in it) as a reference for the machine's speed at that moment. It prints:

- within: the robust spread of rounds inside a session, and their lag-1 autocorrelation (high
  means slow drift: minutes of a neighbour's load, which more rounds do not average away);
- between: the robust spread of per-session medians, the figure the gate's z-score divides by,
  raw and divided by the reference (whether normalising to the machine's speed would help);
- blocks: the spread of medians of consecutive blocks of rounds inside sessions;
- the least slowdown caught in 95% of sessions at the gate's z: (z + 1.645) x between-spread,
  a normal approximation, never below the effect floor.

    python benchmarks/machine_noise.py                     # resnet20, 6 sessions x 40 rounds
    python benchmarks/machine_noise.py --workload deepconn --sessions 10 --rounds 20
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable, Sequence

import numpy as np
from lab import ROOT

from tfperf.gate.statistics import GateSettings, relative_sigma

WORKLOADS = ROOT / "workloads"
# One-sided 95%: the injected slowdown must clear the threshold by this many sigmas.
Z_POWER_95 = 1.645


def _seconds(function: Callable[[], object]) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def child(workload_name: str, rounds: int, steps: int) -> None:
    """One session: rounds of training, each followed by the reference's best of three."""
    sys.path.insert(0, str(WORKLOADS))
    from tfperf.worker import strategies
    from tfperf.worker.training import loop
    from tfperf.workload import ModelConfig, load_module

    workload = load_module(WORKLOADS / f"{workload_name}.py")
    config = ModelConfig("tiny", workload.batch_sizes["tiny"], workload.data_formats[0], seed=0)
    trainer = loop.Trainer(workload, config, strategies.load("single").create(
        ["/cpu:0"], strategies.StrategySettings()), "/cpu:0", jit_compile=False)
    matrix = np.random.default_rng(0).random((384, 384), dtype=np.float32)

    def reference() -> None:
        x = matrix
        for _ in range(8):
            x = (x @ matrix) * 0.01

    for _ in range(2):  # tracing and warm caches, as the harness's warm-up rounds
        trainer.run_round(steps)
    rows = [(_seconds(lambda: trainer.run_round(steps)), min(_seconds(reference)
                                                             for _ in range(3)))
            for _ in range(rounds)]
    print(json.dumps(rows))


def _lag1(values: np.ndarray) -> float:
    return float(np.corrcoef(values[:-1], values[1:])[0, 1]) if len(values) > 2 else 0.0


def report(sessions: Sequence[np.ndarray], settings: GateSettings) -> list[str]:
    rates = [1 / s[:, 0] for s in sessions]
    normalised = [1 / (s[:, 0] / s[:, 1]) for s in sessions]
    between = relative_sigma([float(np.median(r)) for r in rates])
    between_normalised = relative_sigma([float(np.median(r)) for r in normalised])
    lines = [
        f"sessions {len(sessions)}, rounds {len(rates[0])} each",
        f"within a session: spread {np.median([relative_sigma(r.tolist()) for r in rates]):.1%} "
        f"(median over sessions), lag-1 autocorrelation "
        f"{np.median([_lag1(r) for r in rates]):.2f}",
        f"between sessions: spread {between:.1%}; divided by the reference "
        f"{between_normalised:.1%}",
    ]
    for block in (5, 10, 20):
        medians = [float(np.median(r[i:i + block])) / float(np.median(r))
                   for r in rates for i in range(0, len(r) - block + 1, block)]
        if len(medians) >= 3:
            lines.append(f"blocks of {block} rounds: spread of their medians "
                         f"{relative_sigma(medians):.1%}")
    least = max(settings.floor, (settings.z + Z_POWER_95) * between)
    lines.append(f"least slowdown caught in 95% of sessions at z={settings.z:g}: about "
                 f"{least:.0%} (floor {settings.floor:.0%})")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workload", default="resnet20")
    parser.add_argument("--sessions", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not (WORKLOADS / f"{args.workload}.py").is_file():
        parser.error(f"--workload: no workloads/{args.workload}.py")
    if args.sessions < 3 or args.rounds < 5 or args.steps < 1:
        parser.error("--sessions needs at least 3, --rounds at least 5, --steps at least 1")
    if args.child:
        child(args.workload, args.rounds, args.steps)
        return
    sessions = []
    for i in range(args.sessions):
        done = subprocess.run(
            [sys.executable, __file__, "--child", f"--workload={args.workload}",
             f"--rounds={args.rounds}", f"--steps={args.steps}"],
            capture_output=True, text=True, check=True)
        sessions.append(np.array(json.loads(done.stdout.strip().splitlines()[-1])))
        print(f"session {i + 1}: median round {np.median(sessions[-1][:, 0]):.3f} s",
              flush=True)
    print("\n".join(report(sessions, GateSettings())))


if __name__ == "__main__":
    main()
