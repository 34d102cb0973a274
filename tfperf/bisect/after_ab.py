"""What the nightly bisects after its candidate A/B: each case the A/B session called `slower`,
over the TensorFlows between the pinned one (side A) and the candidate (side B). A release
candidate is bisected over the releases the index serves between the two versions; a nightly
over the nightlies of the days before its own date. The pinned TensorFlow stays the good end
(`current`) and the candidate the bad end, as the A/B ran them.
"""

from __future__ import annotations

import datetime
from typing import Any

from packaging.requirements import Requirement
from packaging.version import Version

from tfperf.ab import session_report
from tfperf.ab.verdict import SLOWER
from tfperf.bisect.candidates import BadRange, nightly_date


def slower_cases(ab: dict[str, Any]) -> list[str]:
    settings = session_report.settings_of(ab)
    return [c["case_id"] for c in ab["cases"] if session_report.outcome(c, settings) == SLOWER]


def bisect_args(ab: dict[str, Any], days: int) -> list[str]:
    """tfperf-bisect's arguments (before `--`) for the session's candidate; a BadRange if the
    candidate names no package and version a bisection can enumerate."""
    sides = ab["sides"]
    spec, version = sides["B"]["spec"], sides["B"]["tensorflow"]
    pinned = sides["A"]["tensorflow"]
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
