"""The real first workload trains, and every figure the report promises is in extra_info."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from tests.helpers.suites import MakeSuite
from tfperf.worker.proofs import xla_trace


def conv_macs(out_hw: int, out_c: int, kernel: int, in_c: int) -> int:
    return out_hw * out_hw * out_c * kernel * kernel * in_c


def resnet20_training_flops() -> int:
    """By hand from the architecture: forward, filter gradients, and input gradients of every
    convolution but the stem (nothing needs the image's gradient), plus the classifier."""
    stem = conv_macs(32, 16, 3, 3)
    body = 0
    for hw, c, c_in in ((32, 16, 16), (16, 32, 16), (8, 64, 32)):
        body += conv_macs(hw, c, 3, c_in) + 5 * conv_macs(hw, c, 3, c)
        if c != c_in:
            body += conv_macs(hw, c, 1, c_in)  # projection shortcut
    dense = 64 * 10
    return 2 * (2 * stem + 3 * body + 3 * dense)


def test_resnet20_trains_and_reports_every_figure(make_suite: MakeSuite) -> None:
    suite = make_suite("resnet20")
    result = suite.runpytest(
        "--perf-only=workload=resnet20", "--perf-only=device_kind=cpu",
        "--perf-only=device_count=1", "--perf-only=xla=off", "--perf-only=data_format=NHWC",
        "--perf-only=strategy=single", "--perf-only=input=synthetic",
        "--perf-rounds=2", "--perf-steps-per-round=3", "--perf-batch-size=16",
        "--perf-yardstick-every=1", "--perf-profile=resnet20", "--benchmark-json=out.json")
    assert result.parseoutcomes() == {"no_baseline": 1}, result.stdout.str()
    saved = json.loads((suite.path / "out.json").read_text())
    bench = saved["benchmarks"][0]
    info = bench["extra_info"]
    # Machine facts as the worker's TensorFlow reported them: a CPU build names no CUDA.
    machine = saved["machine_info"]["tfperf"]
    assert machine["tensorflow_build"]["tensorflow"] == "2.21.0"
    assert machine["cuda"] is None and machine["cudnn"] is None
    assert machine["gpus"] == [] and machine["gpu_links"] == []
    assert machine["gpu_unavailable_reason"].startswith("no NVIDIA driver")
    assert info["flops_per_example"] == resnet20_training_flops()
    assert info["loss_last"] < info["loss_first"]
    assert info["batch_size"] == 16 and info["xla"] == "off" and info["data_format"] == "NHWC"
    step = info["step_time_s"]
    assert 0 < step["p10"] <= step["median"] <= step["p90"]
    assert info["examples_per_sec"] > 0 and info["compile_s"] > 0
    assert info["time_to_first_step_s"] > info["compile_s"]
    assert info["mfu"] > 0 and info["peak_flops_per_device"] > 1e9
    # Beside another test's workers (the self-tests run two at a time) the yardstick bursts can
    # read low and MFU pass 100% (1.29 once): never without a flag that says so.
    assert info["mfu"] < 1 or any("is above 100%" in f for f in info["figures_flagged"]), info
    # MFU rates each measured round against the faster of the matrix-product bursts timed
    # just before and just after it.
    bursts = info["peak_flops_per_device_by_round"]
    assert len(bursts) == len(info["worker_round_s"]) + 1 == 3
    flops_per_round = info["flops_per_example"] * 16 * 3
    assert info["mfu"] == pytest.approx(statistics.median(
        flops_per_round / s / max(bursts[n], bursts[n + 1])
        for n, s in enumerate(info["worker_round_s"])))
    assert info["figures_flagged"] == [] or "yardstick" in info["figures_flagged"][0]
    assert info["peak_memory_bytes"] > 0
    assert info["isolation_overhead"] is not None
    assert bench["stats"]["rounds"] == 2
    assert info["xla_compilations"] == {"before_measurement": 0, "during_measurement": 0}
    # The profile of one more round, where TensorBoard's profile plugin looks for it.
    profile = Path(info["profile"])
    assert profile.is_relative_to(suite.path / ".perf-results" / "profiles")
    assert profile.name == info["case_id"]
    result.stdout.fnmatch_lines([f"*resnet20-cpu1-*: profile: tensorboard --logdir {profile}"])
    traces = list(profile.glob("local/plugins/profile/*/*.xplane.pb"))
    assert len(traces) == 1
    assert any(name.endswith("Conv2D") for name in xla_trace.event_names(profile))


def test_a_case_trains_the_same_way_every_time(make_suite: MakeSuite) -> None:
    """The seed reaches Keras' initialisers too: two sessions start from the same weights and
    follow the same losses (with TensorFlow's seed alone, each began elsewhere)."""
    suite = make_suite("tinycnn")
    losses = []
    for session in ("one", "two"):
        result = suite.runpytest(
            "-k", "tinycnn-cpu1-workers1-xla_off-NHWC-default-single-fp32-synthetic",
            "--perf-rounds=2", "--perf-steps-per-round=3", f"--benchmark-json={session}.json",
            f"--perf-history={session}")
        assert result.parseoutcomes().get("no_baseline") == 1, result.stdout.str()
        info = json.loads((suite.path / f"{session}.json").read_text())["benchmarks"][0]
        losses.append((info["extra_info"]["loss_first"], info["extra_info"]["loss_last"]))
    assert losses[0] == losses[1]
