"""The fast lane: pure Python, no TensorFlow and no process, so that it runs in under a minute.

Both rules are enforced here, not hoped for: a test that starts a process (subprocess, fork,
spawn) fails, and so does one that imports TensorFlow or Keras while it runs, where this lane
runs alone (`./run fast`; in the whole run the real lane's conftest has imported them already).
What a fast module imports when it is loaded, tests/real/test_layout.py imports in a fresh
interpreter."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from types import ModuleType
from typing import NoReturn

import pytest

HEAVY = ("tensorflow", "keras")


class _NoHeavyImports(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname.partition(".")[0] in HEAVY:
            raise ImportError(f"the fast lane imports no {fullname}: move the test to tests/real/")
        return None


def _no_process(*args: object, **kwargs: object) -> NoReturn:
    raise RuntimeError("the fast lane starts no process: move the test to tests/real/")


@pytest.fixture(autouse=True)
def _pure(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(subprocess.Popen, "_execute_child", _no_process)
    for name in ("fork", "forkpty", "posix_spawn", "posix_spawnp", "system"):
        monkeypatch.setattr(os, name, _no_process)
    if not any(name in sys.modules for name in HEAVY):
        monkeypatch.setattr(sys, "meta_path", [_NoHeavyImports(), *sys.meta_path])
    yield
