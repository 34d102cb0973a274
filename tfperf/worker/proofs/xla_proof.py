"""Proof that a case ran XLA as named: `off` ran none, `jit` and `auto` ran some, in every
process that runs the case's steps. Asking for XLA proves nothing (auto-clustering can compile
nothing; a workload can compile part of itself with XLA in an `off` case).

One process: a TensorFlow profiler trace of one round counts XLA's executions (xla_trace).

A cluster's tasks: each task's XLA compilation counter (xla_compilations), read after the
warm-up rounds. The profiler is not used there because it is not safe there: stopping it in
task worker:1 of a 2-worker MultiWorkerMirroredStrategy cluster crashed the process (SIGSEGV,
or SIGABRT from `free(): invalid pointer`) in 9 of 30 loopback clusters of 50 start/stop cycles
each, spawned or forked, whether or not worker:0 profiled too (benchmarks/profiler_in_cluster.py
reproduces it). A program that XLA compiled in a task is a program that task runs: jit_compile
functions compile at their first call, auto-clustering when a cluster first runs.

Both paths need TensorFlow only through the modules they call; `problem` needs none.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfperf.worker.proofs import xla_compilations
from tfperf.worker.proofs.case_checks import ConfigurationError

if TYPE_CHECKING:
    from tfperf.worker.pipelines import Source


def problem(mode: str, seen: Mapping[str, int], what: str) -> str | None:
    """Why `seen` (task name, "" for this process -> count of `what`: "executions" or
    "compilations") does not prove `mode`, or None when it does."""
    verb = {"executions": "executed", "compilations": "compiled"}[what]
    for task, count in seen.items():
        where = f" in task {task}" if task else ""
        if mode == "off" and count:
            return f"xla=off, yet XLA {verb} {count} {_times(what, count)}{where}"
        if mode != "off" and not count:
            return f"xla={mode}, yet XLA {verb} nothing{where}"
    return None


def _times(what: str, count: int) -> str:
    if what == "executions":
        return "time" if count == 1 else "times"
    return "program" if count == 1 else "programs"


def executions_in_one_round(source: Source, k: int) -> int:
    """XLA executions in one more round of this process, from a profiler trace."""
    from tfperf.worker.proofs import xla_trace

    with xla_trace.traced() as activity:
        source.round(k)
    return activity.executions


def compilations_by_task(own: Path, task: str, servers: Mapping[str, str]) -> dict[str, int]:
    """Compilations of the tasks that run the steps: this task's own (`own`, its counter's
    folder) or, where a coordinator sends the steps to servers (`servers`: name -> address),
    each server's, from the folder it counts in."""
    if not servers:
        return {task: xla_compilations.count(own)}
    return {name: xla_compilations.count(xla_compilations.task_folder(address))
            for name, address in servers.items()}


def prove_in_a_round(source: Source, k: int, mode: str) -> dict[str, Any]:
    """Fails the case unless one more round ran XLA as `mode` names (see xla_proof)."""
    executions = executions_in_one_round(source, k)
    why = problem(mode, {"": executions}, "executions")
    if why:
        raise ConfigurationError(why)
    return {"xla_executions": executions, "xla_compilations_by_task": None}


def prove_in_tasks(mode: str, compiled: Path, task: str, servers: dict[str, str]
                        ) -> dict[str, Any]:
    """Fails the case unless every task that runs its steps compiled XLA programs as `mode`
    names (see xla_proof: the profiler is unsafe in a cluster's tasks)."""
    by_task = compilations_by_task(compiled, task, servers)
    why = problem(mode, by_task, "compilations")
    if why:
        raise ConfigurationError(why)
    return {"xla_executions": None, "xla_compilations_by_task": by_task}
