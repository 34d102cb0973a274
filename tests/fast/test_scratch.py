"""Scratch folders (tfperf.processes.scratch): a session killed outright leaves its own, and the
next session removes them; nothing of a live process, another kind or another name. The real
lane kills a session and starts the next: tests/real/test_isolation.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tfperf.processes import scratch


def _no_such_pid() -> int:
    # Above the kernel's largest pid: no process has it, now or later.
    return int(Path("/proc/sys/kernel/pid_max").read_text()) + 1


def test_a_folder_names_its_maker_and_is_swept_only_once_its_maker_is_gone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)  # read TMPDIR again
    live = scratch.make("ab-numerics")
    assert live.parent == tmp_path and live.name.startswith(f"tfperf-ab-numerics-{os.getpid()}-")
    (live / "kept.json").write_text("{}")
    dead = tmp_path / f"tfperf-worker-{_no_such_pid()}-a1b2c3d4"
    (dead / "xla-compilations").mkdir(parents=True)
    others = [tmp_path / "tfperf-z-a1b2c3d4",  # the self-tests' shared zygotes: no pid
              tmp_path / "tfperf-worker-a1b2c3d4",  # made before scratch folders named a pid
              tmp_path / f"other-{_no_such_pid()}-a1b2c3d4"]
    for folder in others:
        folder.mkdir()
    (tmp_path / f"tfperf-cluster-{_no_such_pid()}-a1b2c3d4").write_text("a file, not a folder")

    assert scratch.sweep(tmp_path) == [dead]
    assert not dead.exists() and (live / "kept.json").exists()
    assert all(folder.is_dir() for folder in others)
    assert scratch.sweep(tmp_path) == []
