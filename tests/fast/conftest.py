"""The fast lane: pure Python, no TensorFlow and no process, so that it runs in under a minute.

Both rules are enforced here, not hoped for: a test that starts a process (subprocess, fork,
spawn) fails, and so does one that imports TensorFlow or Keras while it runs, where this lane
runs alone (`./run fast`; in the whole run the real lane's conftest has imported them already).
What a fast module imports when it is loaded, tests/real/test_layout.py imports in a fresh
interpreter."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from typing import NoReturn

import pytest

from tests.helpers.refused_imports import Refused

HEAVY = ("tensorflow", "keras")


def _no_process(*args: object, **kwargs: object) -> NoReturn:
    raise RuntimeError("the fast lane starts no process: move the test to tests/real/")


@pytest.fixture(autouse=True)
def _pure(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(subprocess.Popen, "_execute_child", _no_process)
    for name in ("fork", "forkpty", "posix_spawn", "posix_spawnp", "system"):
        monkeypatch.setattr(os, name, _no_process)
    if not any(name in sys.modules for name in HEAVY):
        refused = Refused(HEAVY, "the fast lane imports no {name}: move the test to tests/real/")
        monkeypatch.setattr(sys, "meta_path", [refused, *sys.meta_path])
    yield
