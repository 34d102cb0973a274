"""Why a cluster task proves XLA without the profiler: stopping it there crashes the process.

Starts --clusters clusters of two MultiWorkerMirroredStrategy tasks on loopback, each a plain
spawned interpreter (no zygote, no harness). Each task trains a small CNN and runs --cycles
cycles of: profiler start, three steps, profiler stop, two steps. Prints how each task ended,
per cluster, and the count of crashes (killed by a signal). faulthandler writes the stack of a
crash into the task's log, kept in --logs.

What it showed on a 2-vCPU AMD EPYC host (TensorFlow 2.21, CPU): 9 of 30 clusters lost task
worker:1 (SIGSEGV, or SIGABRT after `free(): invalid pointer`), always inside
`tf.profiler.experimental.stop()`, never worker:0. With only worker:1 profiling
(--profile worker1): 8 of 20. With each task idle 0.2 s after its stop, so that no peer's
collective meets it (--quiet-after-stop 0.2): 2 of 6. So neither a second profiler, nor the
peer's traffic during the stop, nor a process forked from the zygote (these are spawned) is
needed: the crash is in TensorFlow's own profiler teardown in a collective task.

    python benchmarks/profiler_in_cluster.py                       # 30 clusters x 50 cycles
    python benchmarks/profiler_in_cluster.py --clusters 20 --profile worker1
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from lab import ROOT

from tfperf.processes.cluster import free_ports


def task(index: int, ports: list[int], cycles: int, profile: str, quiet_s: float) -> int:
    """One task of the cluster: train, profiling `cycles` times."""
    faulthandler.enable(all_threads=True)
    os.environ["TF_CONFIG"] = json.dumps({
        "cluster": {"worker": [f"127.0.0.1:{port}" for port in ports]},
        "task": {"type": "worker", "index": index}})
    import tensorflow as tf

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    with strategy.scope():
        model = tf.keras.Sequential([
            tf.keras.Input((16, 16, 3)), tf.keras.layers.Conv2D(8, 3, activation="relu"),
            tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
        optimizer = tf.keras.optimizers.SGD(0.01)
        optimizer.build(model.trainable_variables)
    images = tf.random.uniform((32, 16, 16, 3))
    labels = tf.random.uniform((32,), maxval=10, dtype=tf.int32)

    def replica_step() -> tf.Tensor:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(
                labels, model(images), from_logits=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    step = tf.function(lambda: strategy.run(replica_step))
    for _ in range(3):
        step()
    profiles = profile == "both" or index == 1
    for _ in range(cycles):
        logdir = tempfile.mkdtemp(prefix="tfperf-probe-")
        if profiles:
            tf.profiler.experimental.start(logdir)
        for _ in range(3):
            step()
        if profiles:
            tf.profiler.experimental.stop()
        shutil.rmtree(logdir, ignore_errors=True)
        time.sleep(quiet_s)
        for _ in range(2):
            step()
    return 0


def ended(code: int | None) -> str:
    if code is None:
        return "hung (killed)"
    if code < 0:
        return f"killed by {signal.Signals(-code).name}"
    return "ok" if code == 0 else f"exit {code}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clusters", type=int, default=30)
    parser.add_argument("--cycles", type=int, default=50, help="profiler cycles per task")
    parser.add_argument("--profile", choices=("both", "worker1"), default="both")
    parser.add_argument("--quiet-after-stop", type=float, default=0.0, metavar="SECONDS",
                        help="pause after each stop, so no peer's collective meets it")
    parser.add_argument("--logs", type=Path, default=ROOT / ".perf-results" / "profiler-probe")
    parser.add_argument("--task", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--ports", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.task is not None:
        return task(args.task, [int(p) for p in args.ports.split(",")], args.cycles,
                    args.profile, args.quiet_after_stop)
    args.logs.mkdir(parents=True, exist_ok=True)
    crashes = {0: 0, 1: 0}
    for n in range(args.clusters):
        ports = ",".join(str(p) for p in free_ports(2))
        processes = []
        for index in (0, 1):
            log = (args.logs / f"cluster{n}-worker{index}.log").open("wb")
            processes.append(subprocess.Popen(
                [sys.executable, __file__, "--task", str(index), "--ports", ports,
                 "--cycles", str(args.cycles), "--profile", args.profile,
                 "--quiet-after-stop", str(args.quiet_after_stop)],
                stdout=log, stderr=log, start_new_session=True))
        codes: list[int | None] = []
        for process in processes:
            try:
                codes.append(process.wait(timeout=300))
            except subprocess.TimeoutExpired:  # a peer of a crashed task can wait forever
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
                codes.append(None)
        for index, code in enumerate(codes):
            crashes[index] += code is not None and code < 0
        print(f"cluster {n + 1}: worker:0 {ended(codes[0])}, worker:1 {ended(codes[1])}",
              flush=True)
    print(f"\ncrashed: worker:0 in {crashes[0]}, worker:1 in {crashes[1]} of {args.clusters} "
          f"clusters ({args.cycles} profiler cycles each, profiling: {args.profile}); logs in "
          f"{args.logs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
