"""What an environment has installed: each distribution's name (normalised as PEP 503 says, so
that `Keras` and `keras` are one) and version. The session's own is read here; another
interpreter's by the same code, run in it (tfperf.worker.environment_probe)."""

from __future__ import annotations

import importlib.metadata
import re
from collections.abc import Mapping


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


# TensorFlow's distributions on the package index, the first installed naming the session's.
TENSORFLOW_DISTRIBUTIONS = ("tensorflow", "tensorflow-cpu", "tf-nightly", "tf-nightly-cpu",
                            "tensorflow-intel")


def tensorflow_requirement(found: dict[str, str] | Mapping[str, str]) -> str | None:
    """The requirement that installs the TensorFlow among `found`'s distributions at its
    version (with CUDA's libraries where they are installed beside it); None if none is."""
    for name in TENSORFLOW_DISTRIBUTIONS:
        if name in found:
            cuda = name in ("tensorflow", "tf-nightly") and any(
                other.startswith("nvidia-cudnn") for other in found)
            return f"{name}{'[and-cuda]' if cuda else ''}=={found[name]}"
    return None
