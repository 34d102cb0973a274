"""Mixed precision cases train for real: bf16 and fp16 (with loss scaling) under a policy."""

from __future__ import annotations

import json
import os

from tests.helpers.suites import MakeSuite


def test_mixed_precision_cases_train_and_measure_against_their_dtype_peak(
        make_suite: MakeSuite) -> None:
    suite = make_suite("tinycnn")
    out = suite.path / "results.json"
    result = suite.runpytest(
        "--perf-tier=nightly", "--perf-selection=all", "--perf-only=device_kind=cpu",
        "--perf-only=device_count=1",
        "--perf-only=xla=off", "--perf-only=data_format=NHWC", "--perf-only=strategy=single",
        "--perf-only=placement=default", "--perf-only=precision=mixed_bf16,mixed_fp16",
        "--perf-only=input=synthetic",
        "--perf-rounds=2", "--perf-steps-per-round=5", "--perf-warmup-rounds=1",
        f"--benchmark-json={out}")
    assert result.parseoutcomes() == {"no_baseline": 2}
    infos = {b["extra_info"]["precision"]: b["extra_info"]
             for b in json.loads(out.read_text())["benchmarks"]}
    assert set(infos) == {"mixed_bf16", "mixed_fp16"}
    for info in infos.values():
        assert info["loss_last"] < info["loss_first"]
        # A CPU case's GPU telemetry says why it is absent, never zeros.
        assert info["gpu_telemetry"] == {"unavailable": "unavailable: a CPU case uses no GPU"}
        # What the worker used instead: cores kept busy, resident peak, TF allocator peak.
        worker = info["worker"]
        assert 0.05 < worker["cpu_cores_busy"] <= len(os.sched_getaffinity(0)) + 0.5
        assert worker["peak_rss_bytes"] > 300 * 2**20  # TensorFlow alone takes about 525 MiB
        assert worker["allocator_peak_bytes"] == info["peak_memory_bytes"]
    # MFU's denominator is the matrix-product rate of each policy's compute dtype, measured
    # separately: bf16 and fp16 products do not run at the same rate as each other.
    assert infos["mixed_bf16"]["peak_flops_per_device"] != infos["mixed_fp16"]["peak_flops_per_device"]
