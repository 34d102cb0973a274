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
                         f"${TENSORFLOW_ENV}, else the pinned one). Built once, cached. More "
                         "requirements may follow it, space-separated ('tensorflow-cpu==2.22.0rc0 "
                         "keras==3.15.1'). Every package it does not name is held at the "
                         "session's own version (side A's, in an A/B) where the resolver allows.")
    group.addoption("--perf-env-float", action="store_true",
                    help="Resolve every package of a side's environment afresh (the newest its "
                         "requirements allow), as a nightly that wants the real install would, "
                         "instead of holding the ones it does not name.")


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
