"""What the self-tests share without importing TensorFlow: the repository's paths, the type of
the real lane's `make_suite` fixture, and the workers a self-test left running."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tfperf.processes import leftovers, warm_start

REPO = Path(__file__).resolve().parents[2]
TEST_WORKLOADS = REPO / "tests" / "workloads"

MakeSuite = Callable[..., pytest.Pytester]

# Every process a self-test session starts inherits it, forked or spawned (the real lane's
# conftest sets it): another session on the machine (a soak, a second run) has workers in
# pytester folders too, which are not ours.
SESSION_MARKER = ("TFPERF_SELF_TEST", str(os.getpid()))


def worker_processes() -> list[int]:
    """Pids of tfperf workers still running that this session's self-tests started: not the
    shared zygotes themselves (their children, forked workers, are counted)."""
    shared = warm_start.shared_pids()
    return [pid for pid in leftovers.running(*SESSION_MARKER) if pid not in shared]


# The copies' sessions time the yardstick before every 5th measured round and after the last,
# not before every round: on two cores a burst is 0.1 s of both, tinycnn's round 12 ms, and a
# whole run timed 442 bursts (80 CPU-s) and warmed 154 more (28), a tenth of its CPU. The
# yardstick's own tests ask for every round (test_figure_sanity.py, test_resnet20.py).
YARDSTICK = "--perf-yardstick-every=5"


def copy_suite(folder: Path, *workloads: str, perf_files: tuple[str, ...] = ("test_training.py",)
               ) -> None:
    """A copy of the real suite (ini, conftest, perf/) in `folder`, with the chosen workloads:
    names are looked up in tests/workloads first, then in the project's workloads/. Its
    sessions burst the yardstick every 5 rounds (YARDSTICK)."""
    ini = (REPO / "pytest.ini").read_text()
    assert "\naddopts = " in ini, "the suite's pytest.ini has no addopts line: mend copy_suite"
    (folder / "pytest.ini").write_text(ini.replace("\naddopts = ", f"\naddopts = {YARDSTICK} ", 1))
    shutil.copy(REPO / "conftest.py", folder / "conftest.py")
    (folder / "perf").mkdir()
    for name in perf_files:
        shutil.copy(REPO / "perf" / name, folder / "perf")
    kept = folder / "workloads"
    kept.mkdir()
    shutil.copy(TEST_WORKLOADS / "_tiny.py", kept)
    for helper in (REPO / "workloads").glob("_*.py"):
        shutil.copy(helper, kept)
    for name in workloads:
        source = TEST_WORKLOADS / f"{name}.py"
        if not source.exists():
            source = REPO / "workloads" / f"{name}.py"
        shutil.copy(source, kept)
