"""Does the parameter-server chief crash where its coordinator copies steps' outputs back?
(issue 52 item 6: a chief died of SIGSEGV inside ClusterCoordinator's `copy_tensor`).

In TensorFlow 2.21 `copy_tensor` runs in the coordinator's threads, one per worker task: each
copies its closure's output to the chief as soon as the closure ends
(`cluster_coordinator.Worker._process_closure`), so with two workers two threads copy remote
tensors at once. If that were racy, a chief doing nothing else would crash often. This runs a
bare cluster (a chief, 2 workers and a ps task, each a spawned interpreter: no harness, no
zygote) whose chief schedules tiny steps for --seconds, in rounds of 10 scheduled, joined and
fetched, --runs times, and prints how each chief ended and how many steps' outputs it copied.
With --mode none the steps return nothing (their loss goes into a variable instead), so no
output is copied: the comparison arm.

    python benchmarks/ps_copy_stress.py --runs 4 --seconds 60
    python benchmarks/ps_copy_stress.py --runs 4 --seconds 60 --mode none
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence

import lab  # noqa: F401 (this checkout's tfperf first on the path)

from tfperf.processes.cluster import free_ports

SERVER = """
import tensorflow as tf
r = tf.distribute.cluster_resolver.TFConfigClusterResolver()
tf.distribute.Server(r.cluster_spec(), job_name=r.task_type, task_index=r.task_id,
                     protocol="grpc", start=True,
                     config=tf.compat.v1.ConfigProto(inter_op_parallelism_threads=4)).join()
"""


def chief(mode: str, seconds: float) -> None:
    import tensorflow as tf

    strategy = tf.distribute.experimental.ParameterServerStrategy(
        tf.distribute.cluster_resolver.TFConfigClusterResolver())
    coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)
    with strategy.scope():
        weights = tf.Variable(tf.ones((64, 64)))
        total = tf.Variable(0.0)

    def with_output() -> tf.Tensor:
        return tf.reduce_mean(tf.matmul(tf.random.normal((32, 64)), weights))

    def without_output() -> None:
        total.assign_add(tf.reduce_mean(tf.matmul(tf.random.normal((32, 64)), weights)))

    step = tf.function(with_output if mode == "outputs" else without_output)
    steps, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        scheduled = [coordinator.schedule(step) for _ in range(10)]
        coordinator.join()
        if mode == "outputs":
            sum(float(value.fetch()) for value in scheduled)
        else:
            float(total.numpy())
        steps += 10
    print(json.dumps({"steps": steps}), flush=True)


def one(mode: str, seconds: float) -> dict[str, object]:
    ports = free_ports(4)
    spec = {"chief": [f"127.0.0.1:{ports[0]}"], "ps": [f"127.0.0.1:{ports[3]}"],
            "worker": [f"127.0.0.1:{ports[1]}", f"127.0.0.1:{ports[2]}"]}
    base = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONFAULTHANDLER": "1"}

    def env(kind: str, index: int) -> dict[str, str]:
        return {**base, "TF_CONFIG": json.dumps({"cluster": spec,
                                                  "task": {"type": kind, "index": index}})}

    servers = [subprocess.Popen([sys.executable, "-c", SERVER], env=env(kind, index),
                                stderr=subprocess.DEVNULL)
               for kind, index in (("worker", 0), ("worker", 1), ("ps", 0))]
    started = time.monotonic()
    try:
        done = subprocess.run([sys.executable, __file__, "--chief", mode, str(seconds)],
                              env=env("chief", 0), capture_output=True, text=True, check=False)
    finally:
        for server in servers:
            server.kill()
            server.wait()
    copied = json.loads(done.stdout.strip().splitlines()[-1])["steps"] \
        if done.returncode == 0 and done.stdout.strip() else None
    # faulthandler's report of a crash: the fatal signal and the crashing thread's frames.
    stack = [line.strip() for line in done.stderr.splitlines()
             if line.startswith(("Fatal", "Thread", "Current thread", "  File"))][:12]
    return {"mode": mode, "exit_code": done.returncode, "steps": copied,
            "seconds": round(time.monotonic() - started, 1), "stack": stack}


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--chief"]:
        chief(args[1], float(args[2]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--mode", choices=("outputs", "none"), default="outputs")
    parsed = parser.parse_args(args)
    if parsed.runs < 1 or parsed.seconds <= 0:
        parser.error("--runs is a whole number from 1, --seconds more than 0")
    crashes = 0
    for number in range(1, parsed.runs + 1):
        row = one(parsed.mode, parsed.seconds)
        crashes += row["exit_code"] != 0
        print(json.dumps({"run": number, **row}), flush=True)
    print(f"{crashes} of {parsed.runs} chiefs did not end cleanly ({parsed.mode})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
