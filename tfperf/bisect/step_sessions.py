"""One bisection step: an A/B session of the suite (`pytest`, in a process of its own) with the
candidate as side B and the good end as side A, on the one case the bisection follows, at the
step's floor and confidence. It reuses every worker environment already built (the sessions'
cache) and the A/B mode's every check; the step's verdict is read back from the session's A/B
file, named by the session id the step gives it.

A step whose candidate cannot be built, imported or run is Unusable (the bisection skips it).
A step whose good end fails is not the candidate's fault: a StepError stops the bisection.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tfperf.ab import session_report
from tfperf.bisect import followed as findings
from tfperf.bisect.candidates import Candidate
from tfperf.bisect.levels import Level
from tfperf.bisect.search import Judged, Result, Unusable
from tfperf.ground.failures import AB_FINDINGS
from tfperf.ground.vocabulary import CONFIGURATION, FAILS, FOLLOWS_CONFIGURATION, Followed
from tfperf.options.ab_settings import ABSettings
from tfperf.storage import database
from tfperf.storage.session_files import SESSION_ID_ENV

# Failures of the good end (side A) or of the session itself: the options, the harness.
_SIDE_A = re.compile(r"side A\b|--perf-ab-side-a(-workloads)?[=:]")
_ERROR_LINE = re.compile(r"^(?:ERROR|E  +|SKIPPED \[\d+\]).*$", re.MULTILINE)


class StepError(RuntimeError):
    """A step that says nothing of its candidate (the good end failed); one line."""


@dataclass(frozen=True)
class Selection:
    """The one case a bisection follows: the node id the steps run, the case's id, and the
    user's pytest arguments that every step passes on."""

    node: str
    case_id: str
    pytest_args: tuple[str, ...]


def _pytest(root: Path, args: Sequence[str], env: dict[str, str], log: Path | None,
            timeout_s: float | None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args]
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True,
                          timeout=timeout_s, check=False)
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        # A user's own --perf-store=URL among the arguments keeps its password out of the log.
        log.write_text(database.without_passwords(f"$ {' '.join(command)}\n{done.stdout}"
                                                  f"{done.stderr}"))
    return done


def select(root: Path, tests: Path, pytest_args: Sequence[str], workloads: Path | None
           ) -> Selection:
    """The one training case the arguments select (collected by pytest, nothing run); a
    ValueError, one line, if they select none or several."""
    # As an A/B session, so that the A/B options among the arguments are accepted.
    extra = ["--perf-ab-side-a=current",
             *([f"--perf-workloads={workloads}"] if workloads is not None else [])]
    done = _pytest(root, [str(tests), "--collect-only", "-q", *pytest_args, *extra],
                   dict(os.environ), None, 600)
    nodes = [line.strip() for line in done.stdout.splitlines() if "::test_training[" in line]
    if done.returncode not in (0, 5) or not nodes:
        said = _ERROR_LINE.findall(done.stdout + done.stderr)
        raise ValueError("the pytest arguments select no training case"
                         + (f" ({said[-1].strip()})" if said else "")
                         + ": give the case with -k and the options of a run after --")
    if len(nodes) > 1:
        ids = [n.split("[", 1)[1].rstrip("]") for n in nodes]
        raise ValueError(f"the pytest arguments select {len(nodes)} cases ({', '.join(ids[:3])}"
                         f"{', ...' if len(ids) > 3 else ''}): a bisection follows one; "
                         "narrow -k")
    node = nodes[0]
    return Selection(node, node.split("[", 1)[1].rstrip("]"), tuple(pytest_args))


@dataclass
class StepSessions:
    root: Path  # the project's root: each step's pytest runs there
    results: Path  # the project's results folder: the steps' A/B files are in its ab/
    logs: Path  # each step's output
    selection: Selection
    bisect_id: str
    workloads_of: Callable[[Candidate], Path | None]  # a candidate's workloads folder, if any
    timeout_s: float | None = None
    pairs: tuple[int, int] = (ABSettings().min_pairs, ABSettings().max_pairs)  # first, last look
    followed: Followed = "slower"  # the finding the steps judge (tfperf.bisect.followed)
    number: int = 0  # the steps run so far
    machine_key: str = ""  # as the steps' sessions name it

    def __call__(self, candidate: Candidate, good: Candidate, level: Level) -> Result:
        self.number += 1
        session = f"{self.bisect_id}-step{self.number:02d}"
        started = time.monotonic()
        try:
            b_folder, a_folder = self.workloads_of(candidate), self.workloads_of(good)
        except ValueError as error:
            return Unusable(f"cannot check out: {error}")
        # A step judges the followed finding: the numerics check's extra training (unless it
        # is what is followed) and a finding's profiled round (the culprit is the report) are
        # left out unless the user's own arguments (after them, so theirs win) ask for them.
        defaults, level_args = findings.step_args(self.followed, level, self.pairs, ABSettings())
        args = [self.selection.node, "--perf-profile-regressions=off", *defaults,
                *self.selection.pytest_args,
                f"--perf-tensorflow={candidate.tensorflow}", f"--perf-ab-side-a={good.tensorflow}",
                *level_args]
        if b_folder is not None:
            args.append(f"--perf-workloads={b_folder}")
        if a_folder is not None:
            args.append(f"--perf-ab-side-a-workloads={a_folder}")
        log = self.logs / f"step{self.number:02d}.log"
        try:
            done = _pytest(self.root, args, {**os.environ, SESSION_ID_ENV: session}, log,
                           self.timeout_s)
        except subprocess.TimeoutExpired:
            return Unusable(f"no end within {self.timeout_s:g} s (log: {log})",
                            time.monotonic() - started)
        seconds = time.monotonic() - started
        return self._read(session, done, seconds, log)

    def _read(self, session: str, done: subprocess.CompletedProcess[str], seconds: float,
              log: Path) -> Result:
        path = self.results / "ab" / f"{session}.json"
        data: dict[str, Any] | None = json.loads(path.read_text()) if path.is_file() else None
        case = next((c for c in (data or {}).get("cases", [])
                     if c["case_id"] == self.selection.case_id), None)
        said = [line.strip() for line in _ERROR_LINE.findall(done.stdout + done.stderr)]
        failure = (case or {}).get("failure") or {}
        fails = self.followed == FOLLOWS_CONFIGURATION and bool(failure) and \
            failure["cause"] == CONFIGURATION and not _SIDE_A.search(failure["message"])
        if data is None or case is None or (failure and failure["cause"] not in AB_FINDINGS
                                            and not fails):
            reason = (f"{failure['cause']}: {failure['message']}" if failure
                      else said[-1] if said else f"pytest exited {done.returncode}")
            if _SIDE_A.search(reason):
                raise StepError(f"the good end failed, not the candidate: {reason} (log: {log})")
            return Unusable(f"{reason} (log: {log})", seconds)
        self.machine_key = str(data["machine_key"])
        sides = {name: {"spec": side.get("spec", ""),
                        "tensorflow": (side.get("build") or {}).get("tensorflow") or "",
                        "git": (side.get("build") or {}).get("tensorflow_git") or "",
                        "examples_per_sec": side.get("examples_per_sec")}
                 for name, side in case["sides"].items()}
        if fails:  # no pairs to read: the failure is the verdict, its message the evidence
            return Judged(FAILS, 1.0, 1.0, 1.0, 0, seconds, sides, session,
                          session_report.differences_of(data), note=failure["message"])
        said_of = findings.read(self.followed, case, data)
        return Judged(said_of.verdict, said_of.ratio, said_of.low, said_of.high, said_of.pairs,
                      seconds, sides, session, session_report.differences_of(data))
