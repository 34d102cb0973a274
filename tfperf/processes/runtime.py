"""Where a worker runs: which Python (and so which TensorFlow) and what it adds to the
environment. The session's own by default; `--perf-tensorflow` and the A/B baseline name others
(built by tfperf.processes.environments)."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass

HARNESS_PATH_ENV = "PYTHONPATH"
# What the code under test never sees: the results store's URL, with its password,
# and the tokens a CI job holds. A worker runs a workload, and side B may be a wheel from a
# package index: neither needs them, and either could read them. The session keeps them.
SECRET_NAMES = frozenset({"TFPERF_STORE_URL", "PGPASSWORD", "GH_TOKEN", "GITHUB_TOKEN",
                          "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
                          "ACTIONS_ID_TOKEN_REQUEST_URL"})
SECRET_SUFFIXES = ("_TOKEN", "_PASSWORD", "_SECRET")


def without_secrets(env: Mapping[str, str], suffixes: bool = True) -> dict[str, str]:
    """The environment less every variable that names a secret: SECRET_NAMES, and with
    `suffixes` any name that ends as a token, password or secret does. An installer keeps the
    latter (`suffixes=False`): a private package index's credentials are such variables."""
    return {name: value for name, value in env.items()
            if name not in SECRET_NAMES
            and not (suffixes and name.upper().endswith(SECRET_SUFFIXES))}


@dataclass(frozen=True)
class Runtime:
    spec: str = "current"  # as the user named it
    python: str = sys.executable
    # What the side adds to every worker's environment: the user's variables, and for another
    # interpreter the folder that makes the harness's worker side importable there.
    env: tuple[tuple[str, str], ...] = ()
    tensorflow: str = ""  # the version its TensorFlow reports, once probed ("" for current)
    packages: tuple[tuple[str, str], ...] = ()  # every distribution and its version, once probed
    # The packages its install could not hold at the reference's versions: what
    # had to change besides what the spec names.
    released: tuple[str, ...] = ()

    def environ(self, base: Mapping[str, str]) -> dict[str, str]:
        """A worker's environment: the session's without its secrets, then the side's own
        variables (which the user named for the workers)."""
        return {**without_secrets(base), **dict(self.env)}

    def describe(self) -> str:
        added = " ".join(f"{k}={v}" for k, v in self.env if k != HARNESS_PATH_ENV)
        version = f"TensorFlow {self.tensorflow}" if self.tensorflow else "TensorFlow"
        return f"{version} ({self.spec}{', ' + added if added else ''})"


CURRENT = Runtime()
