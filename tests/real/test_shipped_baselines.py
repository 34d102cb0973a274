"""The shipped baseline entries match today's case configurations: an entry whose case was
measured under another configuration (a workload's batch, version or size, the harness's
measurement) would greet a newcomer's first run with `fingerprint differs`."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.suites import REPO
from tfperf.cases import catalog, matrix, requirements
from tfperf.ground.machine import detect
from tfperf.ground.tiers import MEASUREMENT, Tier
from tfperf.measure import kept_run
from tfperf.measure.worker_spec import worker_spec
from tfperf.options.consumers import WorkerOptions
from tfperf.storage.baselines import BaselineEntries
from tfperf.storage.fingerprint import config_hash


def test_every_shipped_entry_s_cases_have_today_s_configuration(tmp_path: Path) -> None:
    workloads = catalog.read(REPO / "workloads", tmp_path / "catalog.log")
    smoke = MEASUREMENT[Tier.SMOKE]
    options = WorkerOptions(smoke.size, None, smoke.warmup_rounds, smoke.steps_per_round,
                            tmp_path, "auto", "few_large", "local")
    machine = detect()
    cases = {case.id: case for case in (requirements.with_devices(c, machine, "cpu")
                                        for c in matrix.generate(workloads, Tier.SMOKE))}
    stale = []
    entries = sorted((REPO / "baselines").glob("*/entries"))
    assert entries, "no shipped entries"
    for folder in entries:
        active = BaselineEntries(folder).active()
        assert active is not None
        for case_id, baseline in active.cases.items():
            if case_id not in cases:
                stale.append(f"{folder.parent.name} entry {active.version}: {case_id}: no "
                             "longer a smoke case")
                continue
            case = cases[case_id]
            info = workloads[case.workload]
            today = config_hash(kept_run.configuration(
                case, worker_spec(options, case, info, 0), smoke.rounds, info.version))
            kept = {r.fingerprint.hard["config"] for r in baseline.runs}
            if kept != {today}:
                stale.append(f"{folder.parent.name} entry {active.version}: {case_id}: "
                             f"{sorted(kept)} -> {today}")
    assert not stale, "\n".join(stale)
