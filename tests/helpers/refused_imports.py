"""An import finder that fails the import of named modules, for tests that must prove code
does without them: the fast lane's TensorFlow and Keras (tests/fast/conftest.py), A/B
judging's scipy.stats (tests/fast/test_ab_verdict.py)."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
from collections.abc import Sequence
from types import ModuleType


class Refused(importlib.abc.MetaPathFinder):
    """Put first on sys.meta_path: importing any of `names`, or a module inside one, raises
    ImportError with `why`, in which {name} is the module asked for."""

    def __init__(self, names: Sequence[str], why: str) -> None:
        self.names = tuple(names)
        self.why = why

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if any(fullname == name or fullname.startswith(name + ".") for name in self.names):
            raise ImportError(self.why.format(name=fullname))
        return None
