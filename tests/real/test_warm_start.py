"""Workers forked from the session's zygote are processes of their own: their environment,
working directory, pipes, log, process group and exit status, with TensorFlow imported
before they start."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tfperf.processes import shared_zygotes, warm_start

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the zygote is Linux-only")
def test_a_forked_worker_is_a_process_of_its_own(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)  # where `python -m tests.helpers.fork_probe` finds its module
    # As in a user's session: a zygote of the session's own, which ends with it (not the
    # self-tests' shared ones: conftest.py).
    base = {"PATH": os.environ["PATH"], "TF_CPP_MIN_LOG_LEVEL": "2"}
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
    assert zygote is not None and zygote.wait(timeout=10) == 0  # ended with the session
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


# Another session, as a process of its own: the pid of the zygote that forked its probe.
_ANOTHER_SESSION = """
import json, sys
from pathlib import Path
from tfperf.processes import shared_zygotes, warm_start
from tests.real.test_warm_start import _probe_ppid
env = json.loads(sys.argv[1])
warm_start.begin(env, Path(sys.argv[2]) / "another.log")
print(_probe_ppid(env, Path(sys.argv[2]) / "another-probe.log"))
warm_start.end()
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the zygote is Linux-only")
def test_a_shared_zygote_serves_every_session_of_its_settings_and_no_other(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    folder = Path(tempfile.mkdtemp(prefix="tfperf-z-"))  # not the self-tests' own
    base = {"PATH": os.environ["PATH"], "TF_CPP_MIN_LOG_LEVEL": "2", "HOME": str(tmp_path),
            shared_zygotes.FOLDER_ENV: str(folder)}
    try:
        warm_start.begin(base, tmp_path / "1.log")
        first = _probe_ppid(base, tmp_path / "p1.log")
        warm_start.end()
        assert warm_start.shared_pids(base) == {first}  # outlived its session

        # Another process's session that differs only in what no import reads: the same zygote
        # (a bisection's next step, say: its own session id).
        other_home = {**base, "HOME": str(tmp_path / "elsewhere"), "TFPERF_SESSION_ID": "step02",
                      "PY_COLORS": "0", "TF_CONFIG": '{"cluster": {}}'}
        another = subprocess.run([sys.executable, "-c", _ANOTHER_SESSION, json.dumps(other_home),
                                  str(tmp_path)], capture_output=True, text=True, timeout=120,
                                 env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=REPO)
        assert another.returncode == 0, another.stderr
        assert int(another.stdout) == first

        # ... one whose imports could differ, a zygote of its own.
        logged = {**base, "TF_CPP_MIN_LOG_LEVEL": "0"}
        warm_start.begin(logged, tmp_path / "3.log")
        second = _probe_ppid(logged, tmp_path / "p3.log")
        warm_start.end()
        assert second != first and warm_start.shared_pids(base) == {first, second}

        # One that died is replaced at the next session, not used.
        started = {p.pid: p for p in shared_zygotes._started}  # this process's children
        os.kill(first, signal.SIGKILL)
        started[first].wait(timeout=10)
        warm_start.begin(base, tmp_path / "4.log")
        third = _probe_ppid(base, tmp_path / "p4.log")
        warm_start.end()
        assert third not in (first, second) and warm_start.shared_pids(base) == {second, third}

        # Once their folder is gone, they end of themselves.
        started = {p.pid: p for p in shared_zygotes._started}
        assert set(started) >= {second, third}
        shutil.rmtree(folder)
        assert [started[pid].wait(timeout=10) for pid in (second, third)] == [0, 0]
    finally:
        warm_start.end()
        shared_zygotes.end_all(folder)
