"""What the nightly bisects after its candidate A/B: each case the A/B session called `slower`,
over the TensorFlows between the pinned one (side A) and the candidate (side B). A release
candidate is bisected over the releases the index serves between the two versions; a nightly
over the nightlies of the days before its own date. The pinned TensorFlow stays the good end
(`current`) and the candidate the bad end, as the A/B ran them.
"""

from __future__ import annotations

import datetime
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.version import Version

from tfperf.ab import session_file, session_report
from tfperf.ab.verdict import SLOWER
from tfperf.bisect.candidates import BadRange, nightly_date
from tfperf.ground.vocabulary import SIDE_A, SIDE_B
from tfperf.storage.errors import StorageError


def slower_cases(ab: dict[str, Any]) -> list[str]:
    settings = session_report.settings_of(ab)
    return [c["case_id"] for c in ab["cases"] if session_report.outcome(c, settings) == SLOWER]


def bisect_args(ab: dict[str, Any], days: int) -> list[str]:
    """tfperf-bisect's arguments (before `--`) for the session's candidate; a BadRange if the
    candidate names no package and version a bisection can enumerate."""
    sides = ab["sides"]
    spec, version = sides[SIDE_B]["spec"], sides[SIDE_B]["tensorflow"]
    pinned = sides[SIDE_A]["tensorflow"]
    try:
        package = Requirement(spec)
    except ValueError:
        raise BadRange(f"the candidate {spec!r} is not a requirement: a wheel or an interpreter "
                       "has no versions to bisect over") from None
    name = package.name + (f"[{','.join(sorted(package.extras))}]" if package.extras else "")
    day = nightly_date(version)
    if day is not None:
        since = day - datetime.timedelta(days=days)
        return ["nightlies", name, f"{since.isoformat()}..{day.isoformat()}", "--good", "current",
                "--bad", f"{name}=={version}"]
    if not Version(pinned) < Version(version):
        raise BadRange(f"the candidate {version} is not newer than the pinned {pinned}")
    return ["releases", name, f"{pinned}..{version}", "--good", "current", "--bad",
            f"{name}=={version}"]


def run(ab_file: Path, days: int, budget_s: float | None, dry_run: bool,
        pytest_args: Sequence[str], bisect: Callable[[list[str]], int]) -> int:
    """`tfperf-bisect after-ab`: bisect each slower case of the session in turn, the budget
    shared by all; the worst exit status of the bisections."""
    try:
        data = json.loads(ab_file.read_text())
        session_file.validate(data, ab_file)
        cases, common = slower_cases(data), bisect_args(data, days)
    except (OSError, ValueError, StorageError) as error:
        print(f"tfperf-bisect: {error}", file=sys.stderr)
        return 2
    if not cases:
        print(f"tfperf-bisect: no case of {ab_file} is slower: nothing to bisect")
        return 0
    started, worst = time.monotonic(), 0
    for case_id in cases:
        left = None if budget_s is None else budget_s - (time.monotonic() - started)
        if left is not None and left <= 0:
            print(f"tfperf-bisect: the budget is spent; {case_id} not bisected")
            worst = max(worst, 1)
            continue
        argv = [*common, *(["--budget", f"{left:.0f}s"] if left is not None else []), "--",
                *pytest_args, "-k", case_id]
        print("tfperf-bisect " + " ".join(argv), flush=True)
        if not dry_run:
            worst = max(worst, bisect(argv))
    return worst
