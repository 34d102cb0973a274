"""The statistics lane: pure Python as the fast lane is (no TensorFlow, no process: its guard
applies here too), but minutes of simulation, so `./run fast` leaves it out and `./run test`
runs it. Each test judges thousands of simulated sessions by the verdict code itself, seeded:
the same sessions every run, so a test cannot flake."""

from __future__ import annotations

from tests.fast.conftest import _pure  # noqa: F401 (the fast lane's guard, an autouse fixture)
