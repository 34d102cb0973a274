"""A finding's profiled round: each side's worker started alone, warmed up as the
duets' are, one more round under TensorFlow's profiler, then ended. Outside the measured
pairs, so that no pair pays for the profiler, and one side at a time, so that neither profile
has the other's work beside it. Each worker summarises its own trace (the pytest process
imports no TensorFlow); the traces stay in the profiles folder for TensorBoard.

A case of several processes is not profiled: TensorFlow's profiler, stopped inside a task of
a collective cluster, crashed it in 9 of 30 clusters (benchmarks/profiler_in_cluster.py), and a
crash there would end the session's case, not say where it is slower.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tfperf.ab.duet_pool import blamed
from tfperf.ab.duet_types import SIDES, Side
from tfperf.ground.failures import CaseFailure
from tfperf.ground.vocabulary import SIDE_A, SideName
from tfperf.processes.launcher import launch


def profile_round(sides: Mapping[SideName, Side], env: Mapping[str, str], timeout_s: float,
                  log_dir: Path, folder: Path, case_id: str, cluster_mode: str
                  ) -> dict[str, Any]:
    """Each side's op summary and where its trace is; a side that cannot be profiled gives
    the reason instead (the case's verdict stands: the profile only says where)."""
    found: dict[str, Any] = {"folder": str(folder)}
    workers = sides[SIDE_A].spec.case.get("workers", "1")
    if str(workers) != "1":
        return {**found, "error": f"a case of {workers} processes is not profiled (a cluster "
                                  "task's profiler crashes as it stops)"}
    try:
        for name in SIDES:
            side = sides[name]
            processes: Any = launch(side.spec, env, timeout_s,
                                    log_dir / f"{case_id}.{name}-profiled.log", cluster_mode,
                                    side.runtime)
            with blamed(side), processes as worker:
                worker.wait_ready()
                worker.allow(timeout_s)
                answer = worker.profile(folder / name, summarise=True)
                worker.allow(timeout_s)
                finished = worker.finish()
            found[name] = {**answer["profile"],
                           "memory_by_phase": finished.get("memory_by_phase")}
    except CaseFailure as failure:
        return {"folder": str(folder), "error": f"{failure.cause}: {failure.message}"}
    return found
