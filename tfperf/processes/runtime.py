"""Where a worker runs: which Python (and so which TensorFlow) and what it adds to the
environment. The session's own by default; `--perf-tensorflow` and the A/B baseline name others
(built by tfperf.processes.environments)."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass

HARNESS_PATH_ENV = "PYTHONPATH"


@dataclass(frozen=True)
class Runtime:
    spec: str = "current"  # as the user named it
    python: str = sys.executable
    # What the side adds to every worker's environment: the user's variables, and for another
    # interpreter the folder that makes the harness's worker side importable there.
    env: tuple[tuple[str, str], ...] = ()
    tensorflow: str = ""  # the version its TensorFlow reports, once probed ("" for current)

    def environ(self, base: Mapping[str, str]) -> dict[str, str]:
        return {**base, **dict(self.env)}

    def describe(self) -> str:
        added = " ".join(f"{k}={v}" for k, v in self.env if k != HARNESS_PATH_ENV)
        version = f"TensorFlow {self.tensorflow}" if self.tensorflow else "TensorFlow"
        return f"{version} ({self.spec}{', ' + added if added else ''})"


CURRENT = Runtime()
