"""The `--perf-*` option group: declared once, parsed once into a typed PerfOptions.

Values are parsed here rather than by argparse `type=` so that a bad value stops the run with
one line that names the option, the value and what is valid, before any case runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tfperf.cases.matrix import AXIS_BY_NAME
from tfperf.cases.requirements import VIRTUAL_POLICIES
from tfperf.gate.statistics import GateSettings
from tfperf.ground.machine import Machine
from tfperf.ground.tiers import MEASUREMENT, Tier
from tfperf.numerics.compare import FAULTS, ArmSpec
from tfperf.options import ab as ab_options
from tfperf.options import faults, tensorflow_spec
from tfperf.options import plan as plan_options
from tfperf.options import store_url as store_option
from tfperf.options.ab import ABOptions
from tfperf.options.consumers import (
    CompareOptions,
    Faults,
    MeasureOptions,
    WorkerOptions,
)
from tfperf.options.plan import PlanOptions
from tfperf.options.values import ON_OFF, one_of, percent, positive_float, positive_int
from tfperf.processes.cluster import CLUSTER_MODES
from tfperf.processes.protocol import ALL_REDUCE, FILE_LAYOUTS

DEFAULT_TIMEOUT_S = {Tier.SMOKE: 300.0, Tier.NIGHTLY: 1200.0, Tier.FULL: 2400.0}


@dataclass(frozen=True)
class PerfOptions:
    tier: Tier
    only: Mapping[str, tuple[str, ...]]
    batch_size: int | None
    warmup_rounds: int
    rounds: int
    steps_per_round: int
    timeout_s: float
    gate: GateSettings
    rerun: bool  # re-run a flagged case before failing it
    gating: bool  # off: measure and record only (the refresh command's sessions)
    history_dir: Path  # every gated run is kept here, one file per session
    workloads_dir: Path
    cache_dir: Path  # generated input files (TFRecord), kept across sessions
    file_layout: str  # TFRecord files: many_small or few_large
    virtual_devices: str = "cpu"  # device kinds split into logical devices: off, cpu or all
    all_reduce: str = "auto"  # the replicated strategy's all-reduce algorithm
    size: str | None = None  # the workload size, if not the tier's
    cluster: str = "local"  # multi-process cases: local (loopback), tf_config or slurm
    profile: tuple[str, ...] = ()  # cases whose id contains one of these are profiled
    # Profile every confirmed regression, and both sides of every A/B finding (None: not
    # said; then on in A/B sessions and the nightly and full tiers, off in smoke).
    profile_regressions: bool | None = None
    profile_dir: Path = Path(".perf-results/profiles")
    faults: Faults = field(default_factory=Faults)  # test-only, every one
    plan: PlanOptions = field(default_factory=PlanOptions)
    xla_example: ArmSpec | None = None  # one XLA equivalence example instead of drawn ones
    tensorflow: str = "current"  # the TensorFlow under test: every worker's, side B's in an A/B
    hold_environments: bool = True  # hold what a side does not name (--perf-env-float: not)
    ab: ABOptions = field(default_factory=ABOptions)  # an A/B comparison's side A and its judging
    store_url: str = ""  # the results store every case is written to and the gate reads
    yardstick_every: int = 1  # a yardstick burst before every K-th measured round

    @property
    def measure(self) -> MeasureOptions:
        return MeasureOptions(self.worker, self.rounds, self.timeout_s, self.tier,
                              self.history_dir, self.gate, self.gating, self.rerun, self.profile,
                              self.tier is not Tier.SMOKE if self.profile_regressions is None
                              else self.profile_regressions, self.profile_dir,
                              self.yardstick_every)

    @property
    def compare(self) -> CompareOptions:
        return CompareOptions(self.worker, self.ab.settings, self.timeout_s, self.tier,
                              self.profile, self.profile_regressions is not False,
                              self.profile_dir)

    @property
    def worker(self) -> WorkerOptions:
        return WorkerOptions(self.size or MEASUREMENT[self.tier].size, self.batch_size,
                             self.warmup_rounds, self.steps_per_round, self.cache_dir,
                             self.all_reduce, self.file_layout, self.cluster, self.faults)


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("perf", "TensorFlow training performance")
    group.addoption("--perf-tier", metavar="TIER",
                    help="smoke, nightly or full (default: nightly with a GPU, smoke without).")
    group.addoption("--perf-only", metavar="AXIS=V[,V]", action="append", default=[],
                    help="Run only these values of an axis; repeat for several axes. "
                         f"Axes: workload, {', '.join(AXIS_BY_NAME)}.")
    group.addoption("--perf-batch-size", metavar="N",
                    help="Batch size per device (default: the workload's, for the tier's size).")
    group.addoption("--perf-warmup-rounds", metavar="N",
                    help="Rounds run before measuring, for tracing, compilation and autotuning.")
    group.addoption("--perf-rounds", metavar="N", help="Measured rounds per case.")
    group.addoption("--perf-yardstick-every", metavar="K",
                    help="Time the yardstick (what MFU is rated against) before every K-th "
                         "measured round and after the last; the rounds between stand on the "
                         "last burst (default: 1, every round).")
    group.addoption("--perf-cache-dir", metavar="DIR",
                    help="Where generated input files (TFRecord) are kept and reused "
                         "(default: the results folder's cache/, .perf-results/cache).")
    group.addoption("--perf-tfrecord-files", metavar="LAYOUT", default="few_large",
                    help=f"TFRecord file layout: {' or '.join(FILE_LAYOUTS)} (default: few_large).")
    group.addoption("--perf-virtual-devices", metavar="KINDS", default="cpu",
                    help="Run cases that need more devices than the machine has on logical "
                         "devices split from one: off, cpu (default: TensorFlow sees one CPU "
                         "device) or all (GPUs too). Such cases are marked virtual.")
    group.addoption("--perf-all-reduce", metavar="ALGORITHM", default="auto",
                    help=f"All-reduce of the replicated strategy: {', '.join(ALL_REDUCE)} (default "
                         "auto: nccl on GPUs, the collective ring on CPU).")
    group.addoption("--perf-cluster", metavar="MODE", default="local",
                    help="Multi-process cases: local (default: the suite starts every task on "
                         "this machine over loopback), tf_config or slurm (this machine runs its "
                         "own task of a real cluster described by TF_CONFIG or the Slurm job).")
    group.addoption("--perf-size", metavar="SIZE",
                    help="Workload size: tiny or full (default: the tier's, tiny for smoke).")
    group.addoption("--perf-steps-per-round", metavar="K",
                    help="Training steps per round, one host sync each (default: the tier's; A/B: 2).")
    group.addoption("--perf-timeout", metavar="SECONDS",
                    help="Wall-clock limit for one case, start to finish.")
    defaults = GateSettings()
    group.addoption("--perf-z", metavar="Z",
                    help="Robust z-score (against the per-run medians of the case's history) "
                         f"beyond which a slowdown is significant (default: {defaults.z:g}).")
    group.addoption("--perf-effect-floor", metavar="PERCENT",
                    # argparse %-formats help texts: a literal percent sign is written %%.
                    help="The least slowdown that fails a case, however significant (default: "
                         f"{defaults.floor * 100:g}%%; per case in baselines/gate.toml).")
    group.addoption("--perf-min-history", metavar="N",
                    help="Runs of history needed for the z-score; with fewer, a threshold "
                         f"derived from the measured spread (default: {defaults.min_history}).")
    group.addoption("--perf-rerun", metavar="on|off",
                    help="Re-run a flagged case and confirm its slowdown before failing it "
                         "(default: on in the nightly and full tiers, off in smoke).")
    group.addoption("--perf-gate", metavar="on|off", default="on",
                    help="off: measure and keep the runs without gating them (default: on).")
    group.addoption("--perf-history", metavar="DIR",
                    help="Where every gated run is kept, one file per session (default: the "
                         "results folder's history/, .perf-results/history).")
    store_option.add_option(group)
    group.addoption("--perf-profile", metavar="TEXT", action="append", default=[],
                    help="Capture a TensorFlow profiler trace of one round, after the measured "
                         "rounds, of the cases whose id contains TEXT (repeatable; 'all' for "
                         "every case). TensorBoard's profile plugin opens it. In an A/B "
                         "session: one round of each side, alone, after its pairs, with a "
                         "report of the ops whose time moved most.")
    group.addoption("--perf-profile-regressions", metavar="on|off",
                    help="Capture a profile of every case whose regression is confirmed, in "
                         "its re-run, and in an A/B session of both sides of every case that "
                         "ends slower, costs_more or numerics_differ, with a report of where "
                         "(default: on in A/B sessions and the nightly and full tiers, off in "
                         "smoke).")
    group.addoption("--perf-profile-dir", metavar="DIR",
                    help="Where profiles are kept, one folder per session and case (default: "
                         "the results folder's profiles/, .perf-results/profiles).")
    group.addoption("--perf-workloads", metavar="DIR", default="workloads",
                    help="Folder of workload modules, relative to the rootdir.")
    faults.add(group)
    group.addoption("--perf-xla-fault", metavar="FAULT",
                    help="For testing the XLA equivalence check only: inject a numerical fault "
                         f"into its XLA arm: {', '.join(FAULTS)}.")
    group.addoption("--perf-xla-example", metavar="JSON",
                    help="Run the XLA equivalence check on this one example (as printed by a "
                         "failure) instead of drawing examples.")
    tensorflow_spec.add(group)
    plan_options.add(group)
    ab_options.add(group)


def _tier(text: str) -> Tier:
    try:
        return Tier.parse(text)
    except ValueError as error:
        raise ValueError(f"--perf-tier: {error}") from None


def _gate(get: Callable[[str], str | None]) -> GateSettings:
    defaults = GateSettings()
    z, floor, history = get("perf_z"), get("perf_effect_floor"), get("perf_min_history")
    return GateSettings(
        z=positive_float("--perf-z", z) if z else defaults.z,
        floor=percent("--perf-effect-floor", floor) if floor else defaults.floor,
        min_history=positive_int("--perf-min-history", history) if history
        else defaults.min_history)


def _only(items: list[str], workloads: list[str]) -> dict[str, tuple[str, ...]]:
    axes: dict[str, list[str]] = {"workload": workloads}
    axes.update({name: list(axis.values) for name, axis in AXIS_BY_NAME.items()})
    only: dict[str, tuple[str, ...]] = {}
    for item in items:
        name, sep, values = item.partition("=")
        if not sep or name not in axes:
            raise ValueError(
                f"--perf-only: {item!r} is not AXIS=VALUE[,VALUE]; axes: {', '.join(axes)}"
            )
        chosen = tuple(v for v in values.split(",") if v)
        unknown = [v for v in chosen if v not in axes[name]]
        if unknown or not chosen:
            raise ValueError(
                f"--perf-only: {name} has no value {','.join(unknown) or '(empty)'!r}; "
                f"valid: {', '.join(axes[name])}"
            )
        only[name] = chosen
    return only


def _profile(texts: list[str]) -> tuple[str, ...]:
    if "" in texts:
        raise ValueError("--perf-profile: empty; give text from the ids of the cases to profile, "
                         "or 'all'")
    return tuple(texts)


def _example(text: str) -> ArmSpec:
    try:
        return ArmSpec.from_json(text)
    except (ValueError, TypeError) as error:
        raise ValueError(f"--perf-xla-example: not an example as printed by a failure "
                         f"({error})") from None


def parse(config: pytest.Config, machine: Machine, workload_names: Callable[[Path], list[str]],
          results: Path) -> PerfOptions:
    """Read every --perf-* option; raises pytest.UsageError with one line on a bad value.
    `results`: the project's results folder, where the generated folders go by default."""
    get = config.getoption

    def folder(option: str, default: str) -> Path:
        given = get(option)
        return Path(config.rootpath, given) if given else results / default

    try:
        tier = _tier(get("perf_tier")) if get("perf_tier") else (
            Tier.NIGHTLY if machine.gpus else Tier.SMOKE)
        measurement = MEASUREMENT[tier]
        workloads_dir = Path(config.rootpath, get("perf_workloads"))
        timeout = get("perf_timeout")
        batch = get("perf_batch_size")
        only_items = get("perf_only")
        ab = ab_options.parse(get, config.rootpath)
        return PerfOptions(
            tier=tier,
            only=_only(only_items, workload_names(workloads_dir)) if only_items else {},
            batch_size=positive_int("--perf-batch-size", batch) if batch else None,
            warmup_rounds=positive_int("--perf-warmup-rounds", get("perf_warmup_rounds"))
            if get("perf_warmup_rounds") else measurement.warmup_rounds,
            rounds=positive_int("--perf-rounds", get("perf_rounds"))
            if get("perf_rounds") else measurement.rounds,
            steps_per_round=positive_int("--perf-steps-per-round", get("perf_steps_per_round"))
            if get("perf_steps_per_round") else ab.settings.steps_per_round if ab.side_a
            else measurement.steps_per_round,
            timeout_s=positive_float("--perf-timeout", timeout) if timeout
            else DEFAULT_TIMEOUT_S[tier],
            gate=_gate(get),
            rerun=one_of("--perf-rerun", "value", get("perf_rerun"), ON_OFF) == "on"
            if get("perf_rerun") else tier is not Tier.SMOKE,
            gating=one_of("--perf-gate", "value", get("perf_gate"), ON_OFF) == "on",
            history_dir=folder("perf_history", "history"),
            workloads_dir=workloads_dir,
            cache_dir=folder("perf_cache_dir", "cache"),
            file_layout=one_of("--perf-tfrecord-files", "layout", get("perf_tfrecord_files"),
                                FILE_LAYOUTS),
            virtual_devices=one_of("--perf-virtual-devices", "value",
                                    get("perf_virtual_devices"), VIRTUAL_POLICIES),
            all_reduce=one_of("--perf-all-reduce", "algorithm", get("perf_all_reduce"),
                               ALL_REDUCE),
            size=one_of("--perf-size", "size", get("perf_size"), ("tiny", "full"))
            if get("perf_size") else None,
            cluster=one_of("--perf-cluster", "mode", get("perf_cluster"), CLUSTER_MODES),
            profile=_profile(get("perf_profile")),
            profile_regressions=one_of("--perf-profile-regressions", "value",
                                        get("perf_profile_regressions"), ON_OFF) == "on"
            if get("perf_profile_regressions") else None,
            profile_dir=folder("perf_profile_dir", "profiles"),
            faults=faults.parse(get),
            xla_example=_example(get("perf_xla_example")) if get("perf_xla_example") else None,
            plan=plan_options.parse(get, tier, machine),
            tensorflow=tensorflow_spec.parse(get),
            hold_environments=not get("perf_env_float"),
            ab=ab,
            store_url=store_option.parse(get, folder("perf_history", "history")),
            yardstick_every=positive_int("--perf-yardstick-every", get("perf_yardstick_every"))
            if get("perf_yardstick_every") else 1,
        )
    except ValueError as error:
        raise pytest.UsageError(str(error)) from None
