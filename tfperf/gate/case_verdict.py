"""Gate one case's run: find its comparable history, judge each gated figure, confirm what was
flagged, apply waivers. Shared by the in-session gate and the standalone gate command."""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tfperf.gate import statistics
from tfperf.gate.rules import GateRules, Waiver
from tfperf.gate.statistics import METRICS, GateSettings, MetricStatus, MetricVerdict
from tfperf.ground.vocabulary import FINGERPRINT_DIFFERS as FINGERPRINT_DIFFERS
from tfperf.ground.vocabulary import THROTTLED as THROTTLED
from tfperf.ground.vocabulary import WAIVED as WAIVED
from tfperf.ground.vocabulary import CaseStatus as CaseStatus
from tfperf.storage import machine_keys
from tfperf.storage.baselines import Entry
from tfperf.storage.session_files import Run
from tfperf.storage.stored_runs import StoredRuns

# Runs whose regression was confirmed (or waived) are not part of any baseline: a regression
# keeps failing until it is fixed, waived or accepted by a refresh, instead of becoming normal.
EXCLUDED_VERDICTS: tuple[CaseStatus, ...] = (statistics.REGRESSION, WAIVED, THROTTLED)


@dataclass(frozen=True)
class Sources:
    """Where a case's history comes from: the active baseline entry and the kept nightly runs
    (listed, or read from the results store case by case)."""

    entry: Entry | None
    nightly: Sequence[Run] = ()
    stored: StoredRuns | None = None

    @classmethod
    def load(cls, baselines: Path, key: str, stored: StoredRuns | None) -> Sources:
        """The baseline entry is read whole before any case runs: a broken one raises
        StorageError, naming the file. A key with no entry of its own reads the newest entry of
        an old key that baselines/machine_keys.toml maps to it, and the store's runs of those
        keys too."""
        legacy = machine_keys.LegacyKeys.load(baselines)
        return cls(legacy.active_entry(baselines, key),
                   stored=replace(stored, legacy=legacy.serving(key)) if stored else None)

    def runs_of(self, case_id: str) -> list[Run]:
        listed = [r for r in self.nightly if r.case_id == case_id]
        return listed + (self.stored.of(case_id) if self.stored is not None else [])


@dataclass(frozen=True)
class CaseGate:
    run: Run
    verdicts: tuple[MetricVerdict, ...]
    history: tuple[Run, ...]
    status: CaseStatus
    fingerprint_note: str = ""
    soft_note: str = ""
    waiver: Waiver | None = None
    waiver_note: str = ""
    unjudged: str = ""  # why the gate did not judge this run at all
    profile: str = ""  # the profiler trace of a confirmed regression's re-run
    # Set where the whole history is a baseline entry's few runs (none of this machine's own,
    # and too few to settle): which entry, so that a report says what such a history can judge.
    entry_only: str = ""

    @property
    def flagged(self) -> list[MetricVerdict]:
        return [v for v in self.verdicts if v.status == statistics.FLAGGED]

    @property
    def throughput(self) -> MetricVerdict | None:
        return next((v for v in self.verdicts if v.metric == statistics.THROUGHPUT), None)

    @property
    def failed(self) -> bool:
        return self.status == statistics.REGRESSION


def not_judged(run: Run, throttles: Sequence[str]) -> CaseGate:
    """A throttled run is unreliable: reported, kept (as such), never judged or a baseline."""
    return CaseGate(run, (), (), THROTTLED,
                    unjudged=f"not judged: the GPU throttled during measurement "
                             f"({', '.join(throttles)}), so the result is unreliable")


def comparable(run: Run, sources: Sources, limit: int) -> tuple[list[Run], str, str]:
    """The case's recent history of the same hard key (at most `limit` runs, oldest first),
    and notes on hard and soft differences."""
    baseline = sources.entry.cases.get(run.case_id) if sources.entry else None
    since = baseline.history_since if baseline else ""
    candidates = list(baseline.runs if baseline else ()) + [
        r for r in sources.runs_of(run.case_id)
        # Only runs before it: a kept run judged again meets the history it met.
        if since <= r.when < run.when and r.session != run.session]
    candidates = [r for r in candidates if r.verdict not in EXCLUDED_VERDICTS]
    candidates.sort(key=lambda r: r.when)
    same = [r for r in candidates if r.fingerprint.key == run.fingerprint.key][-limit:]
    hard_note = soft_note = ""
    if not same and candidates:
        differences = run.fingerprint.hard_differences(candidates[-1].fingerprint)
        hard_note = "; ".join(differences)
    if same:
        soft_note = "; ".join(run.fingerprint.soft_differences(same[-1].fingerprint))
    return same, hard_note, soft_note


def assess(run: Run, sources: Sources, rules: GateRules, settings: GateSettings) -> CaseGate:
    """The first look: each figure judged against the history; flagged ones await confirmation."""
    history, hard_note, soft_note = comparable(run, sources, settings.history_limit)
    if not history:
        status: CaseStatus = FINGERPRINT_DIFFERS if hard_note else statistics.NO_HISTORY
        return CaseGate(run, (), (), status, hard_note, soft_note)
    baseline = sources.entry.cases.get(run.case_id) if sources.entry else None
    verdicts = []
    for metric in METRICS:
        floor = rules.floor(run.case_id, settings.default_floor(metric), metric.floors)
        now = run.value(metric.name)
        past = [v for r in history if (v := r.value(metric.name)) is not None]
        if now is None or not past:
            continue
        # Only throughput has rounds; the others are one figure per run.
        spread = statistics.within_run_spread([r.round_examples_per_sec for r in history]) \
            if metric == statistics.THROUGHPUT else 0.0
        verdicts.append(statistics.judge(metric, now, past, settings, floor, spread,
                                   baseline.kept_spread if baseline else None))
    entry, entry_runs = sources.entry, {id(r) for r in baseline.runs} if baseline else set()
    only = entry is not None and len(history) < settings.settle \
        and all(id(r) in entry_runs for r in history)
    return CaseGate(run, tuple(verdicts), tuple(history), _overall(verdicts), "", soft_note,
                    entry_only=f"baseline entry {entry.version} of {entry.when[:10]}"
                    if only and entry is not None else "")


def conclude(first: CaseGate, again: Run | None, rules: GateRules, settings: GateSettings,
             today: datetime.date) -> CaseGate:
    """Confirm each flagged figure with `again` (the re-run; the run itself when re-runs are
    off), then apply a waiver to what is confirmed."""
    if not first.verdicts:
        return first  # nothing was judged: no history, or a history of another fingerprint
    second = again or first.run
    stored = [x for r in first.history for x in r.round_examples_per_sec]
    verdicts = []
    for verdict in first.verdicts:
        if verdict.status == statistics.FLAGGED:
            value = second.value(verdict.metric.name)
            # The re-run can lack the figure (scaling without its 1-device reference, say).
            verdict = statistics.confirm(verdict, value, second.round_examples_per_sec, stored,
                                   settings) if value is not None else replace(
                verdict, status=statistics.NOT_CONFIRMED, note="the re-run did not measure it")
        verdicts.append(verdict)
    status: CaseStatus = _overall(verdicts)
    waiver, waiver_note = None, ""
    if status == statistics.REGRESSION:
        confirmed = [v for v in verdicts if v.status == statistics.REGRESSION]
        found = [rules.waiver(first.run.case_id, v.metric.name) for v in confirmed]
        covering = [w for w in found if w is not None]
        if len(covering) == len(found) and not any(w.expired(today) for w in covering):
            waiver = covering[0]
            status = WAIVED
            waiver_note = f"waived until {waiver.expires}: {waiver.reason}"
        elif expired := [w for w in covering if w.expired(today)]:
            waiver_note = (f"waiver expired {expired[0].expires} ({expired[0].reason}): "
                           "gating again")
    return replace(first, verdicts=tuple(verdicts), status=status, waiver=waiver,
                   waiver_note=waiver_note)


def _overall(verdicts: Sequence[MetricVerdict]) -> MetricStatus:
    statuses = {v.status for v in verdicts}
    for status in (statistics.REGRESSION, statistics.FLAGGED, statistics.NOT_CONFIRMED,
                   statistics.UNSTABLE, statistics.FASTER, statistics.BUILDING):
        if status in statuses:
            return status
    return statistics.OK if verdicts else statistics.NO_HISTORY


def extra_info(verdict: CaseGate, again: Run | None) -> dict[str, Any]:
    """The gate's verdict as extra_info carries it (and pytest-benchmark's JSON with it)."""
    return {
        "status": verdict.status,
        "history_runs": len(verdict.history),
        "fingerprint_key": verdict.run.fingerprint.key,
        "fingerprint_differs": verdict.fingerprint_note or None,
        "soft_differences": verdict.soft_note or None,
        "reason": reason(verdict),
        "waiver": verdict.waiver_note or None,
        "not_judged": verdict.unjudged or None,
        "rerun_examples_per_sec": again.examples_per_sec if again else None,
        "figures": {v.metric.name: {"status": v.status, "now": v.now, "baseline": v.baseline,
                                    "change": v.change, "z": v.z, "threshold": v.threshold,
                                    "method": v.method, "p_value": v.p_value, "note": v.note}
                    for v in verdict.verdicts},
    }


def reason(verdict: CaseGate) -> str:
    """Why the case got its verdict, in one line: kept with the run (its `reason`) and shown
    wherever the verdict is. The figures that decided it in full (the change, the threshold and
    how it was set, the history, the confirmation), the others by their change."""
    if verdict.unjudged:
        return verdict.unjudged
    if verdict.status == FINGERPRINT_DIFFERS:
        return f"fingerprint differs from its history: {verdict.fingerprint_note}"
    if not verdict.verdicts:
        return "no history: no comparable runs stored"
    quiet = (statistics.OK, statistics.BUILDING)
    deciding = [v for v in verdict.verdicts if v.status not in quiet]
    parts = [v.described() for v in deciding]
    if not deciding:  # every figure within its threshold: say the threshold once
        first = verdict.verdicts[0]
        parts.append(first.described())
        deciding = [first]
    parts += [f"{v.metric.label} {v.change:+.1%}" for v in verdict.verdicts
              if v not in deciding and v.change is not None]
    said = f"{verdict.status}: " + "; ".join(parts)
    return said + (f"; {verdict.waiver_note}" if verdict.waiver_note else "")


def regression_message(verdict: CaseGate) -> str:
    """The confirmed regression's failure message: its reason, as kept and shown everywhere."""
    return reason(verdict).removeprefix(f"{statistics.REGRESSION}: ")
