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

SHOWN = 5  # programs and instructions a failure names

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


def what_ran(logdir: Path, steps: int) -> str:
    """The XLA programs a trace ran, their sizes and largest instructions: what a case that
    may run no XLA needs to say to be placed (keras 3.16 compiled every NCHW convolution)."""
    from tfperf.worker.telemetry import op_profile

    summary = op_profile.summarise(logdir, steps)
    # The largest programs only: one a convolution made a line of 42 (keras 3.16's NCHW case).
    clusters = sorted(summary["clusters"], key=lambda c: (-c[1], c[0]))
    programs = ", ".join(f"{name} ({size} instructions)" for name, size in clusters[:SHOWN])
    more = f" and {len(clusters) - SHOWN} more" if len(clusters) > SHOWN else ""
    largest = [f"{op} {seconds * 1000:.3f} ms" for op, seconds, _ in summary["ops"]
               if op.startswith("xla:")][:SHOWN]
    return (f"its {len(clusters)} programs, the largest first: "
            f"{programs or 'none named in the trace'}{more}; its largest instructions a step: "
            f"{', '.join(largest) or 'none traced'}")


def prove_in_a_round(source: Source, k: int, mode: str) -> dict[str, Any]:
    """Fails the case unless one more round, under TensorFlow's profiler, ran XLA as `mode`
    names (see xla_proof); where XLA ran and may not, the failure names what it ran."""
    from tfperf.worker.proofs import xla_trace

    with xla_trace.trace_folder() as folder:
        logdir = Path(folder)
        with xla_trace.profiling(logdir):
            source.round(k)
        executions = xla_trace.read(logdir).executions
        why = problem(mode, {"": executions}, "executions")
        if why and executions:
            why = f"{why} ({what_ran(logdir, k)})"
    if why:
        raise ConfigurationError(why)
    return {"xla_executions": executions, "xla_compilations_by_task": None}


def compilations_by_task(own: Path, task: str, servers: Mapping[str, str]) -> dict[str, int]:
    """Compilations of the tasks that run the steps: this task's own (`own`, its counter's
    folder) or, where a coordinator sends the steps to servers (`servers`: name -> address),
    each server's, from the folder it counts in."""
    if not servers:
        return {task: xla_compilations.count(own)}
    return {name: xla_compilations.count(xla_compilations.task_folder(address))
            for name, address in servers.items()}


def prove_in_tasks(mode: str, compiled: Path, task: str, servers: dict[str, str]
                        ) -> dict[str, Any]:
    """Fails the case unless every task that runs its steps compiled XLA programs as `mode`
    names (see xla_proof: the profiler is unsafe in a cluster's tasks)."""
    by_task = compilations_by_task(compiled, task, servers)
    why = problem(mode, by_task, "compilations")
    if why:
        raise ConfigurationError(why)
    return {"xla_executions": None, "xla_compilations_by_task": by_task}
