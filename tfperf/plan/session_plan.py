"""A session's plan, made when its cases are collected and before any runs: the nightly
selection (or the tier's cases), each case's estimated time, what the budget leaves out, and
this runner's shard. See selection, estimate and plan for each part."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tfperf.cases import requirements
from tfperf.cases.matrix import Case
from tfperf.ground.machine import Machine
from tfperf.ground.tiers import Measurement, Tier
from tfperf.options.ab_settings import ABSettings
from tfperf.options.consumers import WorkerOptions
from tfperf.options.plan import PlanOptions
from tfperf.plan import budget, estimate, flops_cache, selection
from tfperf.storage.session_files import Run
from tfperf.workload import WorkloadInfo


@dataclass(frozen=True)
class SessionPlan:
    run: frozenset[Case]  # the cases this session runs
    left_out: Mapping[Case, str]  # case -> why the budget leaves it out
    other_runners: frozenset[Case]  # the other shards' cases
    lines: tuple[str, ...]  # what the session prints first
    seconds: Mapping[Case, float] = field(default_factory=dict)  # each run case's estimate


def _coverage(chosen: selection.Selection | None) -> Callable[[Sequence[Case]], str]:
    def said(cases: Sequence[Case]) -> str:
        if chosen is None:
            return "the tier's cases"
        valid = len(chosen.valid_pairs)
        return f"pair coverage {chosen.covered(cases):.1%} of {valid} valid pairs"
    return said


@dataclass(frozen=True)
class Planning:
    """What a plan is made from, of the session's options."""

    plan: PlanOptions
    worker: WorkerOptions  # the size, batch, warm-up and steps each case's worker runs
    rounds: int
    tier: Tier
    ab: ABSettings | None  # an A/B session's, whose cases are modelled at their longest
    past: Callable[[], Sequence[Run]]  # this machine's kept runs: their wall times
    workloads_dir: Path  # FLOPs per example, counted once per contents


def make(cases: Sequence[Case], workloads: Mapping[str, WorkloadInfo], machine: Machine,
         options: Planning, log_dir: Path) -> SessionPlan:
    """`cases`: the collected ones, in the matrix's order, each as it will run here. Raises
    StorageError where the kept history (each case's past wall times) cannot be read."""
    past = estimate.wall_times(options.past())
    runnable = [c for c in cases if requirements.skip_reason(c, machine) is None]
    chosen = None
    if options.plan.selection == "cover":
        here = set(runnable)  # each case's skip reason worked out once
        chosen = selection.nightly(cases, workloads, here.__contains__)
        ordered = list(chosen.cases)
    else:
        ordered = runnable
    worker = options.worker
    size = worker.size
    flops, note = flops_cache.read(options.workloads_dir, size, log_dir / "flop_census.log")
    measured = Measurement(size, worker.warmup_rounds, options.rounds, worker.steps_per_round)
    estimator = estimate.Estimator(
        machine, measured,
        lambda c: worker.batch_size or workloads[c.workload].batch_size(size, c.precision),
        flops, past, options.ab)
    planned = [budget.Planned(c, *estimator.seconds(c)) for c in ordered]
    kept, dropped = budget.within_budget(planned, options.plan.budget_s)
    others: set[Case] = set()
    title = f"{options.tier.label} tier on {machine.key()}"
    if chosen is not None:
        title = f"nightly selection ({len(chosen.cases)} of {len(cases)} cases) on {machine.key()}"
    if options.plan.shard is not None:
        index, count = options.plan.shard
        mine = budget.shard(kept, index, count)
        others = {p.case for p in kept} - {p.case for p in mine}
        title += f", shard {index}/{count}"
        kept = mine
    budget_s = options.plan.budget_s
    why = f"left out by the {budget.hours(budget_s or 0)} budget (--perf-budget): lower priority"
    lines = budget.describe(title, kept, dropped, _coverage(chosen), budget_s)
    if note:
        lines.append(note)
    return SessionPlan(frozenset(p.case for p in kept), {p.case: why for p in dropped},
                       frozenset(others), tuple(lines), {p.case: p.seconds for p in kept})
