"""How long would a command take on a slower host? An emulation of the AVX2-only AMD EPYC on
an AVX-512 one, for the self-tests' time target there (issue 51: 12 minutes of pytest), when
only the faster kind of host is at hand.

Two things make the AVX2-only host slower, and the command runs under both:
- its kernels: oneDNN, TensorFlow's CPU kernels, is capped at AVX2 (`ONEDNN_MAX_CPU_ISA`);
- its cores: a cgroup (v1) caps the CPU time of the command and every process it starts, at
  the share that makes ResNet-20's tiny training read 1/--slowdown of this host's speed.
ResNet-20 tiny reads about 580-660 examples/s on the AVX-512 EPYC and 210 on the AVX2-only one
(../shared/TF-NOTES.md): --slowdown 3 by default. The quota slows the rest (imports, Python)
by the share it leaves when both cores are wanted, 1.8x at --slowdown 3, near the AVX2-only
host's own cores (`import tensorflow`: 5.5 CPU-s there, about 2.9 on the AVX-512 EPYC); at
--slowdown 4 it is 2.4x. An estimate, not the host (benchmarks/results/selftest_time.md,
2026-11-29). Two limits, seen: TensorFlow still sends bfloat16 to oneDNN by the CPU's own
flags, which the capped oneDNN cannot run (mixed_bf16 cases abort); and a quota stops every
thread at once for the rest of its period, so millisecond steps read noisier than on a slower
host.

Needs root and the cgroup v1 cpu controller (/sys/fs/cgroup/cpu). From the repository's root:

    .venv/bin/python benchmarks/slower_host.py -- env CI=true ./run test -q
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from lab import ROOT

CGROUP = Path("/sys/fs/cgroup/cpu/tfperf-slower-host")
PERIOD_US = 20_000  # short: a quota stops the group for the rest of its period
CAP = {"ONEDNN_MAX_CPU_ISA": "AVX2"}
# ResNet-20 at its tiny size, as a worker trains it: the best of three rounds of 20 steps.
PROBE = """
import json, sys, time
from pathlib import Path
import keras
from tfperf.worker import strategies
from tfperf.worker.training import loop
from tfperf.workload import ModelConfig, load_module
workload = load_module(Path(sys.argv[1]) / "workloads" / "resnet20.py")
config = ModelConfig("tiny", workload.batch_sizes["tiny"], "NHWC", seed=3)
keras.utils.set_random_seed(3)
trainer = loop.Trainer(workload, config, strategies.load("single").create(
    ["/cpu:0"], strategies.StrategySettings()), "/cpu:0", jit_compile=False)
trainer.run_round(5)
trainer.run_round(5)
seconds = []
for _ in range(3):
    start = time.perf_counter()
    trainer.run_round(20)
    seconds.append(time.perf_counter() - start)
print(json.dumps(20 * config.batch_size / min(seconds)))
"""


def _enter(quota_us: int | None) -> None:
    """In the child before it runs: join the group, capped at quota_us per period (or not)."""
    (CGROUP / "cpu.cfs_period_us").write_text(str(PERIOD_US))
    (CGROUP / "cpu.cfs_quota_us").write_text(str(quota_us or -1))
    (CGROUP / "cgroup.procs").write_text(str(os.getpid()))


def _run(command: Sequence[str], env: dict[str, str], quota_us: int | None,
         capture: bool) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, env=env, cwd=ROOT, text=True, check=False,
                          capture_output=capture, preexec_fn=lambda: _enter(quota_us))


def _rate(env: dict[str, str], quota_us: int | None) -> float:
    done = _run([sys.executable, "-c", PROBE, str(ROOT)], env, quota_us, capture=True)
    if done.returncode:
        last = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        sys.exit(f"slower_host: the ResNet-20 probe failed ({last}); it trains with this "
                 f"repository's environment: run this with .venv/bin/python after ./run fast")
    return float(json.loads(done.stdout.strip().splitlines()[-1]))


def quota_us(cores: float, rate: float, target: float) -> int:
    """The quota per period that takes a rate read with `cores` of CPU to `target`, were the
    rate proportional to the CPU it has."""
    return int(cores * target / rate * PERIOD_US)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--slowdown", type=float, default=3.0,
                        help="ResNet-20 tiny reads this many times slower (default: 3)")
    parser.add_argument("command", nargs="+", help="the command to time, after --")
    args = parser.parse_args(argv)
    if args.slowdown < 1:
        parser.error(f"--slowdown: {args.slowdown:g} is not a factor of at least 1")
    if not CGROUP.parent.is_dir() or os.geteuid() != 0:
        parser.error("needs root and the cgroup v1 cpu controller (/sys/fs/cgroup/cpu)")
    CGROUP.mkdir(exist_ok=True)
    try:
        env = dict(os.environ)
        native = _rate(env, None)
        env.update(CAP)
        capped = _rate(env, None)
        # Checked and corrected once: the rate is close to proportional to the quota, not
        # exactly.
        target = native / args.slowdown
        quota = quota_us(len(os.sched_getaffinity(0)), capped, target)
        slowed = _rate(env, quota)
        quota = quota_us(quota / PERIOD_US, slowed, target)
        slowed = _rate(env, quota)
        print(f"ResNet-20 tiny: {native:.0f} ex/s here, {capped:.0f} with oneDNN at AVX2, "
              f"{slowed:.0f} at a quota of {quota / PERIOD_US:.2f} cores "
              f"({native / slowed:.2f}x slower)", flush=True)
        start = time.monotonic()
        done = _run(args.command, env, quota, capture=False)
        print(f"slower_host: {' '.join(args.command)}: exit {done.returncode} in "
              f"{time.monotonic() - start:.1f} s at {native / slowed:.2f}x", flush=True)
        return done.returncode
    finally:
        try:
            CGROUP.rmdir()
        except OSError as error:  # a process the command left behind is still in the group
            print(f"slower_host: {CGROUP} kept: {error}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
