"""Self-tests build small suites with pytester and run them for real (real workers, real TF)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import keras  # noqa: F401
import pytest
import tensorflow  # noqa: F401

# pytester's in-process runs restore sys.modules after each run, and TensorFlow cannot be
# imported twice in one process: importing it here keeps it out of those snapshots.

pytest_plugins = ("pytester",)

REPO = Path(__file__).resolve().parents[1]
TEST_WORKLOADS = Path(__file__).resolve().parent / "workloads"

MakeSuite = Callable[..., pytest.Pytester]


@pytest.fixture
def make_suite(pytester: pytest.Pytester) -> MakeSuite:
    """A copy of the real suite (ini, conftest, perf/) with the chosen workloads.

    Names are looked up in tests/workloads first, then in the project's workloads/.
    """

    def make(*workloads: str, perf_files: tuple[str, ...] = ("test_training.py",)
             ) -> pytest.Pytester:
        shutil.copy(REPO / "pytest.ini", pytester.path / "pytest.ini")
        shutil.copy(REPO / "conftest.py", pytester.path / "conftest.py")
        (pytester.path / "perf").mkdir()
        for name in perf_files:
            shutil.copy(REPO / "perf" / name, pytester.path / "perf")
        folder = pytester.path / "workloads"
        folder.mkdir()
        shutil.copy(TEST_WORKLOADS / "_tiny.py", folder)
        for helper in (REPO / "workloads").glob("_*.py"):
            shutil.copy(helper, folder)
        for name in workloads:
            source = TEST_WORKLOADS / f"{name}.py"
            if not source.exists():
                source = REPO / "workloads" / f"{name}.py"
            shutil.copy(source, folder)
        return pytester

    return make


def worker_processes() -> list[int]:
    """Pids of tfperf workers still running that self-tests started: those working in a
    pytester folder (a benchmark's workers on the same machine are not ours)."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        # A forked worker has its zygote's command line.
        if any(module in cmdline for module in (b"tfperf.worker", b"tfperf.processes.zygote")):
            try:
                cwd = os.readlink(proc / "cwd")
            except OSError:
                continue
            if "/pytest-of-" in cwd:
                pids.append(int(proc.name))
    return pids
