"""One case of an A/B session: both sides measured in interleaved pairs (duet.py), each side
checked as every case is, then the verdict (verdict.py). Always record, then fail: the session
file is complete before any failure is raised."""

from __future__ import annotations

import datetime
import os
import secrets
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from tfperf.ab import costs, differences, duet, duet_pool, numerics_check, session_report
from tfperf.ab.duet_types import SIDES, Comparison, Side
from tfperf.ab.finding import first_finding
from tfperf.ab.profiled_round import profile_round
from tfperf.cases import xla_modes
from tfperf.cases.matrix import Case
from tfperf.ground.failures import CaseFailure, in_one_line
from tfperf.ground.machine import Machine
from tfperf.ground.vocabulary import SIDE_A, SIDE_B, SideName
from tfperf.measure import figures, gpu_telemetry, training_checks
from tfperf.measure.worker_spec import injected_fraction, worker_spec
from tfperf.options.consumers import CompareOptions
from tfperf.processes import scratch
from tfperf.processes.runtime import Runtime
from tfperf.storage import formats, stored_runs, timestamps
from tfperf.storage.files import write_growing
from tfperf.storage.results_store import ResultsStore
from tfperf.storage.stored_runs import Keeper
from tfperf.workload import WorkloadInfo

FORMAT = formats.AB_FORMAT
ROLES: dict[SideName, str] = {SIDE_A: "reference", SIDE_B: "under test"}
# Figures of each side that the session file keeps beside its rounds.
KEPT = ("examples_per_sec", "mfu", "fraction_of_copy_rate", "loss_first", "loss_last",
        "compile_s", "peak_memory_bytes", "xla_executions_per_round", "xla_compilations_by_task",
        "layout_ops_checked", "figures_flagged")


@dataclass(frozen=True)
class SideSetup:
    """What a side is for the whole session."""

    runtime: Runtime
    workloads: Callable[[], dict[str, WorkloadInfo]]
    workloads_dir: Path


@dataclass
class ABRecord:
    case: Case
    sides: dict[str, dict[str, Any]] = field(default_factory=dict)
    pairs: list[dict[str, Any]] = field(default_factory=list)
    looks: list[dict[str, Any]] = field(default_factory=list)
    order_effect: dict[str, float] = field(default_factory=dict)
    wall_s: float | None = None  # the workers' start to their end
    rounds_s: float | None = None  # the measured pairs, and the relays between them
    relay_s: float | None = None  # of which: duets ending and fresh ones starting
    failure: CaseFailure | None = None
    # Each duet's costs on each side, and their verdicts (costs.py).
    costs: dict[str, Any] = field(default_factory=dict)
    numerics: dict[str, Any] | None = None  # numerics_check.NumericsVerdict, once judged
    where: dict[str, Any] | None = None  # a profiled round a side (profiled_round.py), if any

    def to_json(self) -> dict[str, Any]:
        failure = self.failure
        return {"case_id": self.case.id, "case": self.case.axis_values(), "sides": self.sides,
                "pairs": self.pairs, "looks": self.looks, "order_effect": self.order_effect,
                "costs": self.costs, "numerics": self.numerics, "where": self.where,
                "wall_s": self.wall_s, "rounds_s": self.rounds_s, "relay_s": self.relay_s,
                "failure": {"cause": failure.cause, "message": failure.message}
                if failure else None}


def _check(side: Side, compared: Comparison) -> None:
    """Every check a measured case gets, for each of the side's workers, one per duet (XLA and
    layout proofs are the workers' own, before READY)."""
    rounds = compared.sides[side.name]
    for number, ready in rounds.readies.items():
        finished = rounds.finished[number]
        training_checks.check(ready["loss_first"], finished["loss_last"],
                              finished["traces_during_measurement"],
                              finished["compilations_during_measurement"],
                              f"{side.label()}, duet {number}")


class ABRunner:
    def __init__(self, options: CompareOptions, sides: dict[SideName, SideSetup], machine: Machine,
                 log_dir: Path, results_dir: Path, session: str) -> None:
        self.options = options
        self.settings = options.settings
        self.setups = sides
        self.machine = machine
        self.log_dir = log_dir
        self.session = session
        # Draws every pair's turn order (duet.py): a new sequence each session, kept in the
        # session file.
        self.seed = secrets.randbits(32)
        self.path = results_dir / "ab" / f"{session}.json"
        self.records: list[ABRecord] = []
        self.report_lines: list[str] = []  # where the reports were written
        self.keeper: Keeper | None = None  # writes each case to the results store
        self.say: Callable[[str], None] = lambda _: None  # what a running case has so far
        # Both sides' numerics arms; their files are scratch (the verdict keeps the figures).
        self.scratch = scratch.make("ab-numerics")
        self.numerics = numerics_check.NumericsCheck(
            {name: setup.runtime for name, setup in sides.items()}, self.scratch, log_dir,
            options.timeout_s)

    def _side(self, name: SideName, case: Case) -> Side:
        setup = self.setups[name]
        info = setup.workloads().get(case.workload)
        if info is None:
            pytest.skip(f"side {name}'s workloads folder {setup.workloads_dir} has no "
                        f"workload {case.workload!r}")
        gpu_memory = self.machine.gpus[0].memory_bytes if self.machine.gpus else 0
        spec = worker_spec(self.options.worker, case, info, gpu_memory)
        inject = injected_fraction(self.options.worker, case) if name == SIDE_B else 0.0
        if name == SIDE_A:  # test-only injected costs are side B's
            spec = replace(spec, faults=replace(spec.faults, compile_s=0.0, memory_mb=0))
        return Side(name, ROLES[name], setup.runtime, spec, inject)

    def run(self, case: Case, request: pytest.FixtureRequest) -> None:
        # Both sides' rounds are timed by their workers and saved as pytest-benchmark JSON by
        # the reports; pytest-benchmark's fixture, which times one callable, is not used.
        self.measure(case)

    def reported(self, item: pytest.Item, report: pytest.TestReport) -> None:
        """Nothing to add: each case is kept in the session file as it ends."""

    def where_next(self, failure: CaseFailure) -> list[str]:
        record = next((r for r in self.records if r.failure is failure), None)
        where = record.where if record is not None else None
        profiled = [f"where in the step: the profiled round of each side in {where['folder']}"] \
            if where and "error" not in where else []
        return [*profiled, f"the A/B session file: {self.path} (judge it again: tfperf-ab "
                f"{self.path}); its reports are written when the session ends"]

    def finish(self, reports_dir: Path) -> None:
        self.numerics.close()
        shutil.rmtree(self.scratch, ignore_errors=True)
        if self.records:
            self.report_lines = self.reports(reports_dir / "ab")

    def sections(self) -> list[tuple[str, list[str]]]:
        if not self.records:
            return []
        return [(f"tfperf A/B: {self.options.tier.label} tier on {self.machine.key()}",
                 [*self.summary(), *self.report_lines])]

    def machine_info(self) -> dict[str, Any] | None:
        return None  # the A/B reports write their own pytest-benchmark JSON

    def measure(self, case: Case) -> ABRecord:
        sides = {name: self._side(name, case) for name in SIDES}
        record = ABRecord(case)
        self.records.append(record)
        env = xla_modes.case_environment(case, dict(os.environ))
        if case.device_kind == "gpu":
            # Every duet's two workers share each GPU: each takes the memory it needs, not
            # all of it.
            env["TF_FORCE_GPU_ALLOW_GROWTH"] = "true"

        def around(measure: Callable[[], None]) -> dict[str, Any]:
            return gpu_telemetry.around(case.device_kind, env, measure)

        try:
            try:
                compared = duet.run(sides, env, self.settings, self.options.timeout_s,
                                    self.log_dir, case.id, self.options.worker.cluster, around,
                                    self.seed, on_look=lambda v: self.say(
                                        f"{v.pairs} pairs: B/A {v.ratio:.3f} [{v.low:.3f}, "
                                        f"{v.high:.3f}], {v.status}"))
                record.pairs = [p.to_json() for p in compared.pairs]
                record.looks = [v.to_json() for v in compared.verdicts]
                record.order_effect = duet_pool.order_effect(compared.pairs)
                record.wall_s = compared.wall_s
                record.rounds_s = compared.rounds_s
                record.relay_s = compared.relay_s
                shown_by = {}
                for name, side in sides.items():
                    measured = compared.sides[name].measured(compared.telemetry, compared.wall_s)
                    shown = shown_by[name] = figures.figures(side.spec, measured, None)
                    record.sides[name] = {
                        **{key: shown.get(key) for key in KEPT},
                        "spec": side.runtime.spec, "tensorflow": side.runtime.tensorflow,
                        "build": measured.ready.get("build"), "batch_size": side.spec.batch_size,
                        "round_examples_per_sec": [
                            figures.examples_per_round(side.spec, measured.ready) / s
                            for s in measured.round_s]}
                for side in sides.values():
                    _check(side, compared)
                    training_checks.sane(shown_by[side.name], side.label())
                numerics = self._numerics(case, record)
                duets = costs.per_duet(compared.sides)
                judged = costs.judge_all(duets, self.settings)
                record.costs = {"duets": duets,
                                "verdicts": {v.cost.key: v.to_json() for v in judged}}
                found = first_finding(compared.verdicts[-1], numerics, judged)
                if (found and self.options.profile_findings) or self.options.profiles(case.id):
                    self.say("profiling one round a side: where in the step")
                    record.where = profile_round(
                        sides, env, self.options.timeout_s, self.log_dir,
                        self.options.profile_dir / self.session / case.id, case.id,
                        self.options.worker.cluster)
                if found:
                    raise found
            except CaseFailure as failure:
                record.failure = failure
                raise
            except Exception as error:  # the harness's own: kept too, no case leaves no row
                record.failure = CaseFailure("error", in_one_line(error))
                raise
        finally:
            self.keep()
        return record

    def _numerics(self, case: Case, record: ABRecord) -> numerics_check.NumericsVerdict | None:
        """Both sides trained from side A's weights on its batches, compared (none if the
        session said --perf-ab-numerics=off)."""
        if not self.settings.numerics:
            return None
        self.say("numerics: training both sides from side A's weights and batches")
        paths = {name: setup.workloads()[case.workload].path
                 for name, setup in self.setups.items()}
        found = self.numerics.compare(case, paths, self.seed, self.options.worker.faults.numerics)
        record.numerics = found.to_json()
        return found

    def reports(self, folder: Path) -> list[str]:
        """Write the session's reports (session_report.py); lines that say where."""
        return [*session_report.write(self.data(), self.settings, folder),
                f"A/B session kept in {self.path} (judge it again: tfperf-ab FILE)"]

    def summary(self) -> list[str]:
        data = self.data()
        return [differences.describe_sides(data), *differences.lines(data["differences"]),
                *session_report.table(data, self.settings)]

    def watch(self, say: Callable[[str], None]) -> None:
        self.say = say

    def keep_in(self, store: ResultsStore) -> None:
        self.keeper = Keeper.of(store, self.session, "ab", self.options.tier.label,
                                self.machine.key(), differences.between(self._sides()))

    def keep(self) -> None:
        """Rewrite the session's A/B file with every case so far, and add the cases that
        ended to the results store."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = self.data()
        write_growing(self.path, data)
        if self.keeper is not None:
            self.keeper.ab_cases([session_report.stored_row(case, self.settings,
                                                            timestamps.utc(data["when"]))
                                  for case in data["cases"] if case["wall_s"] is not None
                                  or case["failure"] is not None])
            self.keeper.failures([stored_runs.failure_row(r.case.id, r.failure)
                                  for r in self.records if r.failure is not None])

    def data(self) -> dict[str, Any]:
        """The session as its file keeps it (and tfperf-ab reads it)."""
        return {
            "format": FORMAT, "session": self.session, "machine_key": self.machine.key(),
            "when": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "tier": self.options.tier.label,
            "settings": {"floor": self.settings.floor, "alpha": self.settings.alpha,
                         "min_pairs": self.settings.min_pairs,
                         "max_pairs": self.settings.max_pairs, "duets": self.settings.duets,
                         "relay": self.settings.relay, "late_relay": self.settings.late_relay,
                         "relay_until": self.settings.relay_until,
                         "look_rule": self.settings.look_rule, "trim": self.settings.trim,
                         "same_power": self.settings.same_power,
                         "direction_power": self.settings.direction_power,
                         "direction_linear": self.settings.direction_linear,
                         "min_duet_sd": self.settings.min_duet_sd,
                         "adjust_yardstick": self.settings.adjust_yardstick,
                         "spending_power": self.settings.spending_power,
                         "half_doubling": self.settings.half_doubling,
                         "numerics": self.settings.numerics,
                         "seed": self.seed, "turn_s": self.settings.turn_s,
                         "yardstick_every": self.settings.yardstick_every,
                         "steps_per_round": self.options.worker.steps_per_round},
            "sides": self._sides(),
            "differences": differences.between(self._sides()),
            "cases": [r.to_json() for r in self.records]}

    def _sides(self) -> dict[SideName, dict[str, Any]]:
        return {name: {"role": ROLES[name], "spec": setup.runtime.spec,
                       "tensorflow": setup.runtime.tensorflow,
                       "env": {k: v for k, v in setup.runtime.env if k != "PYTHONPATH"},
                       "workloads": str(setup.workloads_dir),
                       "packages": dict(setup.runtime.packages)}
                for name, setup in self.setups.items()}
