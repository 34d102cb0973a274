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

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the zygote is Linux-only")
def test_a_forked_worker_is_a_process_of_its_own(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)  # where `python -m tests.helpers.fork_probe` finds its module
    base = {"PATH": os.environ["PATH"], "TF_CPP_MIN_LOG_LEVEL": "2"}
    # As in a user's session: the zygote ends with it (the self-tests keep theirs: conftest.py).
    kept = warm_start.keep_between_sessions(False)
    monkeypatch.setattr(warm_start, "_zygotes", {})
    warm_start.begin(base, tmp_path / "zygote.log")
    try:
        with (tmp_path / "probe.log").open("wb") as log:
            probe = warm_start.start("tests.helpers.fork_probe", ("7",), {**base, "PROBE": "mine"}, log)
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
            hung = warm_start.start("tests.helpers.fork_probe", ("0",), base, log)
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
        warm_start.keep_between_sessions(kept)
    assert zygote.wait(timeout=10) == 0  # ended with the session
    # After the session, workers spawn as before.
    with (tmp_path / "after.log").open("wb") as log:
        assert warm_start.start("tests.helpers.fork_probe", (), base, log) is None


def _probe_ppid(base: dict[str, str], log_path: Path) -> int:
    """The pid of the zygote that forked a probe, which exits at once."""
    with log_path.open("wb") as log:
        probe = warm_start.start("tests.helpers.fork_probe", ("0",), base, log)
    assert probe is not None and probe.stdin is not None and probe.stdout is not None
    probe.stdin.write(b"\n")
    probe.stdin.flush()
    seen = json.loads(probe.stdout.readline())
    assert probe.wait(timeout=30) == 0 and seen["tensorflow_preloaded"] is True
    return int(seen["ppid"])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the zygote is Linux-only")
def test_a_kept_zygote_serves_the_next_session_of_its_settings_and_no_other(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    monkeypatch.setattr(warm_start, "_zygotes", {})  # not the self-tests' own kept ones
    kept = warm_start.keep_between_sessions(True)
    base = {"PATH": os.environ["PATH"], "TF_CPP_MIN_LOG_LEVEL": "2", "HOME": str(tmp_path)}
    try:
        warm_start.begin(base, tmp_path / "1.log")
        first = _probe_ppid(base, tmp_path / "p1.log")
        warm_start.end()
        assert warm_start.kept_pids() == {first}  # outlived its session

        # A session that differs only in what no import reads gets the same zygote ...
        other_home = {**base, "HOME": str(tmp_path / "elsewhere")}
        warm_start.begin(other_home, tmp_path / "2.log")
        assert _probe_ppid(other_home, tmp_path / "p2.log") == first
        warm_start.end()

        # ... one whose imports could differ, a zygote of its own.
        logged = {**base, "TF_CPP_MIN_LOG_LEVEL": "0"}
        warm_start.begin(logged, tmp_path / "3.log")
        second = _probe_ppid(logged, tmp_path / "p3.log")
        warm_start.end()
        assert second != first and warm_start.kept_pids() == {first, second}

        # A kept zygote that died is replaced at the next session, not used.
        (killed,) = [z._process for z in warm_start._zygotes.values() if z.pid == first]
        killed.kill()
        killed.wait(timeout=10)
        warm_start.begin(base, tmp_path / "4.log")
        third = _probe_ppid(base, tmp_path / "p4.log")
        assert third not in (first, second) and warm_start.kept_pids() == {second, third}
        warm_start.end()

        # Beyond the limit, the least recently used ends with the session that went over.
        monkeypatch.setattr(warm_start, "KEPT_LIMIT", 2)
        (oldest,) = [z._process for z in warm_start._zygotes.values() if z.pid == second]
        quiet = {**base, "TF_CPP_MIN_LOG_LEVEL": "3"}
        warm_start.begin(quiet, tmp_path / "5.log")
        fourth = _probe_ppid(quiet, tmp_path / "p5.log")
        warm_start.end()
        assert warm_start.kept_pids() == {third, fourth} and oldest.wait(timeout=10) == 0
    finally:
        warm_start.keep_between_sessions(kept)
        processes = [z._process for z in warm_start._zygotes.values()]
        warm_start.close_all()
    assert [p.wait(timeout=10) for p in processes] == [0, 0]
    assert warm_start.kept_pids() == set()
