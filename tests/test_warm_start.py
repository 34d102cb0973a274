"""Workers forked from the session's zygote are processes of their own: their environment,
working directory, pipes, log, process group and exit status, with TensorFlow imported
before they start."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import pytest

from tfperf.processes import warm_start

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the zygote is Linux-only")
def test_a_forked_worker_is_a_process_of_its_own(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)  # where `python -m tests.fork_probe` finds its module
    base = {"PATH": os.environ["PATH"], "TF_CPP_MIN_LOG_LEVEL": "2"}
    warm_start.begin(base, tmp_path / "zygote.log")
    try:
        with (tmp_path / "probe.log").open("wb") as log:
            probe = warm_start.start("tests.fork_probe", ("7",), {**base, "PROBE": "mine"}, log)
        assert isinstance(probe, warm_start.ForkedProcess)
        assert probe.stdin is not None and probe.stdout is not None
        probe.stdin.write(b"hello\n")
        probe.stdin.flush()
        seen = json.loads(probe.stdout.readline())
        assert probe.wait(timeout=30) == 7
        assert seen["tensorflow_preloaded"] is True
        assert seen["ppid"] != os.getpid()  # the zygote's child, not ours
        assert seen["pgid"] == seen["pid"] == probe.pid  # its own process group
        assert (seen["cwd"], seen["probe"], seen["argv"], seen["line"]) == (
            str(REPO), "mine", ["7"], "hello")
        assert "to the log" in (tmp_path / "probe.log").read_text()

        # Killed by a signal: the exit status says which, as subprocess's does.
        with (tmp_path / "hung.log").open("wb") as log:
            hung = warm_start.start("tests.fork_probe", ("0",), base, log)
        assert hung is not None and hung.stdin is not None
        hung.stdin.write(b"hang\n")
        hung.stdin.flush()
        assert hung.poll() is None
        os.killpg(hung.pid, signal.SIGKILL)
        assert hung.wait(timeout=30) == -signal.SIGKILL
        (only,) = warm_start._zygotes.values()  # one runtime: one zygote
        zygote = only._process
    finally:
        warm_start.end()
    assert zygote.wait(timeout=10) == 0  # ended with the session
    # After the session, workers spawn as before.
    with (tmp_path / "after.log").open("wb") as log:
        assert warm_start.start("tests.fork_probe", (), base, log) is None
