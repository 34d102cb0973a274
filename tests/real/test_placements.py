"""Placements on logical CPU devices, for real: layers, variables and gradients land on the
devices the placement names, and device-to-device copies order as in the seeds' experiment
(alternating more than towers_split, one device none)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.suites import MakeSuite
from tfperf.worker import placements, strategies
from tfperf.worker.training import loop
from tfperf.workload import ModelConfig, load_module

DEEPCONN = Path(__file__).resolve().parents[2] / "workloads" / "deepconn.py"


def test_towers_split_places_forward_backward_and_variables_by_tower() -> None:
    # This process has one CPU device, so the placement is checked as requested in the traced
    # graph; the suite run below checks that it ran so (soft placement off, variables checked
    # by the worker).
    workload = load_module(DEEPCONN)
    devices = ["/device:CPU:0", "/device:CPU:1"]
    trainer = loop.Trainer(
        workload, ModelConfig("tiny", 4, "NHWC", 0),
        strategies.load("single").create(devices, strategies.StrategySettings()), devices[0],
        jit_compile=False, pool_size=1,
        place=lambda model: placements.load("towers_split").assign(model, workload, devices))
    assert trainer.assignment["item_conv"] == devices[1]
    assert trainer.assignment["user_conv"] == devices[0]
    assert "words" not in trainer.assignment and "fm" not in trainer.assignment
    graph = trainer.step_graph(4)
    convolutions = [op for op in graph.get_operations() if op.type.startswith("Conv2D")]
    forward = {op.device for op in convolutions if not op.name.startswith("gradient_tape/")}
    backward = {op.device for op in convolutions if op.name.startswith("gradient_tape/")}
    assert forward == backward == {"/device:CPU:0", "/device:CPU:1"}


def test_copies_order_as_in_the_seeds(make_suite: MakeSuite) -> None:
    suite = make_suite("deepconn")
    result = suite.runpytest(
        "--perf-tier=full", "--perf-size=tiny", "--perf-only=device_kind=cpu",
        "--perf-only=device_count=1,2", "--perf-only=xla=off",
        "--perf-only=input=synthetic", "--perf-only=precision=fp32",
        "--perf-only=strategy=single", "--perf-only=placement=default,towers_split,alternating",
        "--perf-rounds=3", "--perf-steps-per-round=5",
        "--benchmark-json=out.json")
    assert result.parseoutcomes() == {"no_baseline": 3}, result.stdout.str()
    infos = {b["extra_info"]["placement"]: b["extra_info"]
             for b in json.loads((suite.path / "out.json").read_text())["benchmarks"]}
    copies = {name: info["copies_per_step"]["count"] for name, info in infos.items()}
    assert copies["default"] == 0 < copies["towers_split"] < copies["alternating"], copies
    for name in ("towers_split", "alternating"):
        info = infos[name]
        assert info["virtual"] is True and info["strategy_run"] == {"replicas": 1}
        assert info["loss_last"] < info["loss_first"]
        # One replica over two devices: examples/s per device against one device.
        assert info["scaling_efficiency"] == (
            info["examples_per_sec"] / 2 / infos["default"]["examples_per_sec"])

