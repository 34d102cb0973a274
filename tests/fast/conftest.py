"""The fast lane: pure Python, no TensorFlow and no process, so that it runs in under a minute.

Both rules are enforced here, not hoped for. Starting a process (subprocess, fork, spawn) fails
the test that tried. Importing TensorFlow or Keras fails too where this lane runs alone
(`pytest tests/fast`); in the whole run the real lane has imported them already, and
tests/real/test_layout.py imports every fast module in a fresh interpreter instead."""

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


if not any(name in sys.modules for name in HEAVY):
    sys.meta_path.insert(0, _NoHeavyImports())


def _no_process(*args: object, **kwargs: object) -> NoReturn:
    raise RuntimeError("the fast lane starts no process: move the test to tests/real/")


@pytest.fixture(autouse=True)
def _no_processes(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(subprocess.Popen, "_execute_child", _no_process)
    for name in ("fork", "forkpty", "posix_spawn", "posix_spawnp", "system"):
        monkeypatch.setattr(os, name, _no_process)
    yield
