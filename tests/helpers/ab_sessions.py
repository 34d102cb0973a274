"""The A/B sessions the real lane's tests share: the case they compare, the settings they
run at, and what a session run once for several tests leaves to read."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

CASE = ("--perf-only=device_kind=cpu", "--perf-only=device_count=1", "--perf-only=xla=off",
        "--perf-only=data_format=NHWC", "--perf-only=strategy=single", "--perf-only=input=synthetic",
        "--perf-only=workers=1", "--perf-only=placement=default", "--perf-only=precision=fp32")
CASE_ID = "tinycnn-cpu1-workers1-xla_off-NHWC-default-single-fp32-synthetic-prep_host"
# tinycnn's millisecond steps on a shared 2-core machine: beside another session's workers its
# A/A turns spread 10% pair to pair and 16 pairs put B/A at 0.94 [0.84, 1.02]. The floor is
# wide enough that an A/A session decides whatever else the machine runs; the slowdown below
# (B/A 0.67) is beyond it. With three other sessions' workers beside it (load 6.5 on the 2
# cores) an A/A was still undecided at 48 pairs: up to 96 are allowed, which only a case that
# has not decided by 48 uses. The interval's degrees of freedom are its duets (each worker
# process a unit), not its pairs: four duets for 64 pairs give t(3), whose 99% quantile is 5.8,
# and beside a busy neighbour (pairs spreading 30-40%) 2 of 3 A/As at the default relay were
# still undecided at 64 pairs (one at 96). A fresh duet every 4 pairs decided 3 of 3 by 64
# under that load: 8 duets at 32 pairs, 16 at 64.
# A yardstick burst (0.1 s, beside a 0.5 s turn) at each duet's first pair only: no verdict uses
# them. The A/A session, which checks every pair's yardstick, bursts at every pair.
AB = ("--perf-ab-side-a=current", "--perf-ab-floor=20", "--perf-ab-turn=0.5",
      "--perf-ab-pairs=8:96", "--perf-ab-relay=4", "--perf-steps-per-round=10",
      "--perf-warmup-rounds=2", "--perf-ab-yardstick-every=4")


def session_file(folder: Path) -> dict[str, Any]:
    """The A/B session file a suite run in `folder` kept (one)."""
    (found,) = (folder / ".perf-results" / "ab").glob("*.json")
    data: dict[str, Any] = json.loads(found.read_text())
    return data


@dataclass(frozen=True)
class SessionRun:
    """A suite run once, in a folder of its own, whose outputs several tests read."""

    path: Path
    ret: int
    stdout: pytest.LineMatcher
    output: str

    @classmethod
    def run(cls, folder: Path, *args: str, timeout_s: float = 1200) -> SessionRun:
        done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
                              cwd=folder, capture_output=True, text=True, timeout=timeout_s,
                              check=False)
        output = done.stdout + done.stderr
        return cls(folder, done.returncode, pytest.LineMatcher(done.stdout.splitlines()), output)

    def session_file(self) -> dict[str, Any]:
        return session_file(self.path)
