"""One pytest session of the suite, as a study runs it: a fresh `python -m pytest` process in a
results folder (a checkout: this one, a clone at another commit, a copied suite), with a
timeout, and what it left behind: its exit code, its wall seconds, its output, and the files it
wrote (the A/B session files, the history's session files, pytest-benchmark's JSON)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from lab import ROOT, records
from tfperf.storage import session_files

# The exit code a session that ran out of its time is given (pytest's own are 0 to 5).
TIMED_OUT = -1


@dataclass(frozen=True)
class Session:
    command: list[str]
    code: int  # pytest's exit code, or TIMED_OUT
    seconds: float  # the process's wall time, start to end
    stdout: str
    stderr: str
    ab_files: list[Path]  # the A/B session files it wrote, in name (so time) order
    history_files: list[Path]  # the session files it kept in the history, in name order
    benchmarks: list[dict[str, Any]] | None  # each benchmark's extra_info (measure() only)

    def ab(self) -> dict[str, Any] | None:
        """The last A/B session file it wrote, read; None if it wrote none."""
        return records.session(self.ab_files[-1]) if self.ab_files else None

    def runs(self) -> list[session_files.Run]:
        """Every run of the session files it kept in the history."""
        return [run for path in self.history_files for run in session_files.read_session(path)]

    def tail(self, stdout: int = 3000, stderr: int = 2000) -> str:
        """The end of its output, for a study to print where a session went wrong."""
        return self.stdout[-stdout:] + self.stderr[-stderr:]


def _files(folder: Path | None) -> set[Path]:
    return set(folder.glob("*.json")) if folder is not None and folder.is_dir() else set()


def run(args: Sequence[str], *, cwd: Path = ROOT, python: str | Path = sys.executable,
        history: Path | None = None, env: Mapping[str, str] | None = None,
        timeout: float | None = None) -> Session:
    """`python -m pytest -q -p no:cacheprovider ARGS` in `cwd` (a checkout with its own
    .perf-results/), with `--perf-history=HISTORY` where one is given, and `env` added to this
    process's environment. A session that takes longer than `timeout` seconds is killed and
    given TIMED_OUT. The new files are those that were not there before it started."""
    ab = cwd / ".perf-results" / "ab"
    kept = None if history is None else history / "results"
    command = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *args,
               *([] if history is None else [f"--perf-history={history}"])]
    before_ab, before_kept = _files(ab), _files(kept)
    # Output to files, not pipes: a process the session leaves running (a worker, a zygote)
    # would hold a pipe open, and reading it to its end would wait for that process too.
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        try:
            code = subprocess.run(command, cwd=cwd, stdout=out, stderr=err, check=False,
                                  env=None if env is None else {**os.environ, **env},
                                  timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            code = TIMED_OUT
        seconds = time.perf_counter() - started
        stdout, stderr = (_read(out), _read(err))
    return Session(command, code, seconds, stdout, stderr,
                   sorted(_files(ab) - before_ab), sorted(_files(kept) - before_kept), None)


def measure(args: Sequence[str], **options: Any) -> Session:
    """A session measured, not judged: no gate and a history of its own (a temporary folder),
    so that neither the user's history nor a noisy moment decides whether a figure comes
    back; its benchmarks' extra_info read from pytest-benchmark's JSON (None if it wrote
    none)."""
    with tempfile.TemporaryDirectory(prefix="tfperf-lab-") as folder:
        out = Path(folder) / "out.json"
        done = run([*args, "--perf-gate=off", f"--benchmark-json={out}"],
                   history=Path(folder) / "history", **options)
        found = [b["extra_info"] for b in json.loads(out.read_text())["benchmarks"]] \
            if out.exists() else None
    return Session(done.command, done.code, done.seconds, done.stdout, done.stderr,
                   done.ab_files, [], found)


def _read(file: IO[bytes]) -> str:
    file.seek(0)
    return file.read().decode(errors="replace")
