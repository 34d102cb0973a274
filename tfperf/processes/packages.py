"""What an environment has installed: each distribution's name (normalised as PEP 503 says, so
that `Keras` and `keras` are one) and version. The session's own is read here; another
interpreter's by the same code, run in it (tfperf.worker.environment_probe)."""

from __future__ import annotations

import importlib.metadata
import re


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def installed() -> dict[str, str]:
    """This interpreter's distributions, by normalised name (the first on the path of each)."""
    found: dict[str, str] = {}
    for distribution in importlib.metadata.distributions():
        name = distribution.metadata["Name"]
        if name:
            found.setdefault(normalise(name), distribution.version)
    return dict(sorted(found.items()))
