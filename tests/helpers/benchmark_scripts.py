"""The studies in benchmarks/ are scripts, not a package: a fast-lane test loads one by its
file, as `python benchmarks/NAME.py` would run it, without running its main; and the lab's
parts (benchmarks/lab/) as a study imports them, with the studies' folder on the path."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
if str(BENCHMARKS) not in sys.path:  # as when a study runs: its folder on the path
    sys.path.append(str(BENCHMARKS))


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def lab(name: str) -> ModuleType:
    """One of the lab's modules (benchmarks/lab/NAME.py), as `from lab import NAME` gives it."""
    return importlib.import_module(f"lab.{name}")
