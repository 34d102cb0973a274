"""An A/B side's rounds in pytest-benchmark's format, so that `pytest-benchmark compare A.json
B.json` reads an A/B session as it reads two runs."""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

import pytest_benchmark
from pytest_benchmark.stats import Stats

# pytest-benchmark's own statistics of a list of round times (the package has no type hints).
_stats: Callable[[], Any] = Stats


def benchmark_json(data: dict[str, Any], name: str) -> dict[str, Any]:
    """Side `name`'s rounds as pytest-benchmark saves a session (round times in seconds)."""
    benchmarks = []
    for case in data["cases"]:
        rates = case["sides"].get(name, {}).get("round_examples_per_sec")
        if not rates:
            continue
        stats = _stats()
        for rate in rates:  # a round's time, per example: comparable across batch sizes
            stats.update(1.0 / rate)
        benchmarks.append({
            "group": None, "name": f"test_training[{case['case_id']}]",
            "fullname": f"tfperf/suite/test_training.py::test_training[{case['case_id']}]",
            "params": {"perf_case": case["case_id"]}, "param": case["case_id"],
            "extra_info": {k: v for k, v in case["sides"][name].items()
                           if k != "round_examples_per_sec"},
            "options": {"timer": "time.perf_counter", "unit": "seconds per example"},
            "stats": {**stats.as_dict(), "data": list(stats.data), "iterations": 1}})
    return {"machine_info": {"node": "", "tfperf": {"key": data["machine_key"], "side": name,
                                                   **data["sides"][name]}},
            "commit_info": {}, "benchmarks": benchmarks,
            "datetime": data.get("when") or datetime.datetime.now(datetime.UTC).isoformat(),
            "version": pytest_benchmark.__version__}
