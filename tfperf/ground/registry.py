"""Plug-in registries: a package whose modules each define one implementation (a strategy, a
pipeline, a placement). The set of modules present is the registry, so adding one edits no
other file; names are listed without importing the modules (nor TensorFlow)."""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

WORKER = Path(__file__).resolve().parents[1] / "worker"


def names(package_path: Iterable[str]) -> set[str]:
    """The modules of a package, helpers (underscore names) left out."""
    return {m.name for m in pkgutil.iter_modules(package_path) if not m.name.startswith("_")}


def load(package: str, package_path: Iterable[str], name: str, attribute: str, kind: str) -> Any:
    """`attribute` of the package's module `name`; a KeyError naming the kind if absent."""
    if name not in names(package_path):
        raise KeyError(f"{kind} {name!r} is not implemented")
    return getattr(importlib.import_module(f"{package}.{name}"), attribute)


@functools.cache  # asked for every case of a matrix; a process's worker folder does not change
def implemented(kind: str) -> frozenset[str]:
    """The values of one of the worker's plug-in packages (strategies, pipelines, placements),
    listed from its folder: the host side never imports the worker side."""
    return frozenset(names([str(WORKER / kind)]))
