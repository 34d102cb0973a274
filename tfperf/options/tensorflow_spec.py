"""The option that names the TensorFlow under test: every worker of a session runs in it (side
B in an A/B comparison). The spec is checked here (a requirement that parses, a wheel or an
interpreter that exists); its environment is built when the session starts, before any case."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from tfperf.processes import environments

TENSORFLOW_ENV = "TFPERF_TENSORFLOW"


def add(group: Any) -> None:
    group.addoption("--perf-tensorflow", metavar="SPEC",
                    help="The TensorFlow under test: a pip requirement (tensorflow-cpu==2.20.0), "
                         "a wheel file, the path of a Python interpreter, or current (default: "
                         f"${TENSORFLOW_ENV}, else the pinned one). Built once, cached.")


def spec(option: str, text: str) -> str:
    """`text` if it names a TensorFlow a worker environment can be built for."""
    try:
        environments.kind(text)
    except environments.SpecError as error:
        raise ValueError(f"{option}: {error}") from None
    return text


def parse(get: Callable[[str], Any]) -> str:
    """The spec of the TensorFlow under test; raises ValueError with one line on a bad one."""
    return spec("--perf-tensorflow",
                get("perf_tensorflow") or os.environ.get(TENSORFLOW_ENV) or "current")
