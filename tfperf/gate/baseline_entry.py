"""A refreshed baseline entry: the active entry's cases with the measured runs added (or, for a
marked change, restarted), and the lines that show what it changes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from tfperf.gate.statistics import relative_sigma
from tfperf.storage.baselines import CaseBaseline, Entry
from tfperf.storage.session_files import Run


def _median(runs: Sequence[Run]) -> float | None:
    return float(np.median([r.examples_per_sec for r in runs])) if runs else None


def diff(old: Entry | None, new: Mapping[str, CaseBaseline]) -> list[str]:
    lines = [f"{'case':<78} {'old ex/s':>10} {'new ex/s':>10} {'change':>8} {'runs':>5}"]
    for case_id, baseline in sorted(new.items()):
        before = old.cases.get(case_id) if old else None
        then, now = _median(before.runs) if before else None, _median(baseline.runs)
        change = f"{now / then - 1:+.1%}" if then and now else "new"
        if before is not None and before is baseline:
            continue  # unchanged
        lines.append(f"{case_id:<78} {then or 0:>10.1f} {now or 0:>10.1f} {change:>8} "
                     f"{len(baseline.runs):>5}")
        if before and before.runs and baseline.runs:
            hard = baseline.runs[-1].fingerprint.hard_differences(before.runs[-1].fingerprint)
            if hard:
                lines.append(f"  fingerprint changes: {'; '.join(hard)}")
    return lines


def refreshed(old: Entry | None, measured: Mapping[str, list[Run]], mark: bool,
              nightly: Sequence[Run], limit: int) -> dict[str, CaseBaseline]:
    """The cases of the new entry: the old entry's, with the measured cases' runs added (or,
    with a marked change, restarted with their spread kept)."""
    cases = dict(old.cases) if old else {}
    for case_id, runs in measured.items():
        before = cases.get(case_id)
        since = before.history_since if before else ""
        if mark:
            # The history restarts here; the spread it had is kept for the short-history
            # threshold of the runs to come.
            past = list(before.runs if before else ()) + [
                r for r in nightly if r.case_id == case_id and r.when >= since]
            kept = relative_sigma([r.examples_per_sec for r in past]) if len(past) >= 2 else None
            cases[case_id] = CaseBaseline(tuple(runs), runs[0].when, kept)
        elif before is None:
            cases[case_id] = CaseBaseline(tuple(runs), since)
        else:
            cases[case_id] = CaseBaseline((before.runs + tuple(runs))[-limit:], since,
                                          before.kept_spread)
    return cases
