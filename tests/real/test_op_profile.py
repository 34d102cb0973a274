"""The worker's summary of a profiled round (tfperf/worker/telemetry/op_profile.py) on real
traces of TensorFlow 2.21, with and without XLA, read in a process of their own (the pytest
process imports no TensorFlow). A whole A/B's where-report: test_ab.py's slowdown."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import json, sys
from pathlib import Path
import keras, tensorflow as tf
from tfperf.worker.telemetry import op_profile

model = keras.Sequential([keras.Input((8, 8, 3)), keras.layers.Conv2D(4, 3),
                          keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(2)])
optimizer = keras.optimizers.SGD(0.01)
x, y = tf.random.normal((16, 8, 8, 3)), tf.zeros((16,), tf.int32)
found = {}
for jit in (False, True):
    @tf.function(jit_compile=jit)
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(y, model(x)))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    step(x, y)
    logdir = Path(sys.argv[1]) / str(jit)
    tf.profiler.experimental.start(str(logdir))
    for _ in range(3):
        step(x, y)
    tf.profiler.experimental.stop()
    found[str(jit)] = op_profile.summarise(logdir, 3)
print(json.dumps(found))
"""


def test_a_trace_is_summarised_by_op_and_xla_cluster(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], capture_output=True,
                          text=True, timeout=300, check=True)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    plain, jit = found["False"], found["True"]
    ops = {op for op, _, _ in plain["ops"]}
    # TensorFlow's ops by type; no function call counted as an op (it holds the ops it ran).
    assert any("Conv2D" in op for op in ops) and any("MatMul" in op for op in ops), ops
    assert not any(op.startswith(("__", "xla:")) or "PartitionedCall" in op for op in ops), ops
    assert plain["clusters"] == [] and plain["every_op"] and plain["steps"] == 3
    assert plain["ops_s"] >= sum(seconds for _, seconds, _ in plain["ops"]) * 0.999
    # With jit_compile the step is one XLA cluster: its HLO instructions ran, each by kind.
    ((cluster, instructions),) = jit["clusters"]
    assert "XlaMustCompile_true" in cluster and "config_proto" not in cluster
    assert instructions > 20, jit["clusters"]
    assert jit["ops"] and all(op.startswith("xla:") for op, _, _ in jit["ops"]), jit["ops"]
    assert any("convolution" in op for op, _, _ in jit["ops"]), jit["ops"]
    # By kind: `fusion.3` and `fusion.4` are one `fusion` (two builds number them apart).
    assert not any(re.search(r"\.\d+$", op) for op, _, _ in jit["ops"]), jit["ops"]
