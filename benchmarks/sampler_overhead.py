"""Measure what NVML sampling costs the measurement it watches.

Two figures, each repeated and quoted as the median:

1. The sampler's own cost: seconds of CPU per sample (every metric of every GPU), and so the
   share of one core it takes at the default interval.
2. Its effect on training: rounds of a real Keras training step (ResNet-20, tiny size) timed
   with and without a sampler running, alternated so that drift hits both alike. The sampler
   runs in the training process itself, competing for its interpreter lock: in the suite it
   runs in the parent process and the worker trains in another, so this is an upper bound.

On a machine with an NVIDIA driver it samples the real GPUs through nvidia-ml-py; without one
it samples the FAKE NVML of the self-tests (tests/helpers/fake_nvml.py), which measures the sampler's
thread and bookkeeping but not the driver's calls. It says which.

    python benchmarks/sampler_overhead.py [--repeats=5] [--pairs=10] [--interval=0.1]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from lab import ROOT  # the checkout first on the path: also for the fake NVML in tests/

from tfperf.measure.gpu_telemetry import Sampler


def _nvml() -> tuple[Any, list[int], str]:
    import pynvml

    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as error:
        from tests.helpers.fake_nvml import FakeNvml

        return FakeNvml(), [0, 1], f"FAKE NVML (no NVIDIA driver: {error})"
    count = pynvml.nvmlDeviceGetCount()
    pynvml.nvmlShutdown()
    return pynvml, list(range(count)), f"real NVML, {count} GPU(s)"


def _sample_cost(nvml: Any, gpus: list[int], samples: int) -> float:
    """CPU seconds per sample of every metric of every GPU."""
    sampler = Sampler(gpus, interval_s=3600.0, nvml=nvml)  # the thread never wakes
    with sampler:
        start = time.process_time()
        for _ in range(samples):
            sampler._sample()
        return (time.process_time() - start) / samples


def _train_round() -> Any:
    import tensorflow as tf

    from tfperf.workload import ModelConfig, load_module

    workload = load_module(ROOT / "workloads" / "resnet20.py")
    config = ModelConfig("tiny", 32, "NHWC", 0)
    model = workload.build_model(config)
    optimizer = workload.optimizer(config)
    features, labels = workload.make_batches(config, 1)
    images, targets = tf.constant(features[0]), tf.constant(labels[0])

    @tf.function  # type: ignore[untyped-decorator]
    def round_of(steps: Any) -> Any:
        loss = tf.constant(0.0)
        for _ in tf.range(steps):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(workload.loss(targets, model(images, training=True)))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    def run(steps: int) -> float:
        start = time.perf_counter()
        float(round_of(tf.constant(steps)))
        return time.perf_counter() - start

    run(2)  # traced and warm
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--interval", type=float, default=0.1)
    args = parser.parse_args()
    nvml, gpus, which = _nvml()
    print(f"sampling: {which}; interval {args.interval * 1000:.0f} ms")

    costs = [_sample_cost(nvml, gpus, 200) for _ in range(args.repeats)]
    cost = statistics.median(costs)
    print(f"one sample: {cost * 1e6:.0f} us of CPU (median of {args.repeats}: "
          f"{', '.join(f'{c * 1e6:.0f}' for c in costs)}); at the interval, "
          f"{cost / args.interval:.3%} of one core")

    run = _train_round()
    ratios = []
    for repeat in range(args.repeats):
        plain, sampled = [], []
        for pair in range(args.pairs):
            # Alternate which goes first, so that a trend in the machine's speed cancels.
            for with_sampler in ((False, True) if pair % 2 == 0 else (True, False)):
                if with_sampler:
                    with Sampler(gpus, interval_s=args.interval, nvml=nvml):
                        sampled.append(run(args.steps))
                else:
                    plain.append(run(args.steps))
        ratio = statistics.median(sampled) / statistics.median(plain) - 1
        ratios.append(ratio)
        print(f"repeat {repeat + 1}: round {statistics.median(plain) * 1000:.0f} ms without, "
              f"{statistics.median(sampled) * 1000:.0f} ms with the sampler: {ratio:+.2%}")
    print(f"slowdown with the sampler in the training process (upper bound), median of "
          f"{args.repeats}: {statistics.median(ratios):+.2%}")


if __name__ == "__main__":
    main()
