"""The self-tests, in two lanes (README, docs/layout.md):

- tests/fast/: pure Python. No TensorFlow, no process: the edit-test loop, under a minute.
- tests/real/: real pytest runs (pytester) of small suites with real workers and TensorFlow.

This file imports neither TensorFlow nor a worker: `pytest tests/fast` stays fast."""

from __future__ import annotations

import pytest

pytest_plugins = ("pytester", "tests.helpers.postgres_server")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "long: one of the longest self-tests (minutes on 2 cores); "
                                       "they start first")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest self-tests first. pytest-xdist's worksteal gives each worker a half of the
    collection in order, and a worker that runs out takes the tail of the other's: with the
    long tests at the head, the last minutes are short tests on both cores, not one long test
    on one."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)
