"""The case matrix as data: axes, their values, the tier each value joins, and validity rules.

A case is one point of the product of the axes. Invalid points (NCHW for a workload without
images, a data-parallel strategy on one device) are never generated. Valid points that this
machine cannot run, or that the harness does not implement yet, are generated and skipped with a
reason (see `requirements.py`), so nothing disappears silently.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields, replace

from tfperf.ground.tiers import Tier
from tfperf.processes.protocol import CaseAxes
from tfperf.workload import WorkloadInfo


@dataclass(frozen=True)
class Axis:
    name: str
    # value -> lowest tier that includes it
    values: Mapping[str, Tier]
    help: str


# `workload` values come from the workloads found on disk; every other axis is fixed here.
AXES: tuple[Axis, ...] = (
    Axis("device_kind", {"cpu": Tier.SMOKE, "gpu": Tier.SMOKE}, "where the model runs"),
    Axis("device_count", {"1": Tier.SMOKE, "2": Tier.SMOKE, "4": Tier.NIGHTLY, "8": Tier.NIGHTLY},
         "devices per worker"),
    Axis("workers", {"1": Tier.SMOKE, "2": Tier.SMOKE, "4": Tier.NIGHTLY},
         "worker processes (several: a cluster over loopback, or a real one joined)"),
    Axis("xla", {"off": Tier.SMOKE, "jit": Tier.SMOKE, "auto": Tier.NIGHTLY},
         "off, auto-clustering (auto) or tf.function(jit_compile=True) (jit)"),
    Axis("data_format", {"NHWC": Tier.SMOKE, "NCHW": Tier.SMOKE}, "image layout"),
    Axis(
        "placement",
        {"default": Tier.SMOKE, "ps_host": Tier.NIGHTLY, "towers_split": Tier.NIGHTLY,
         "alternating": Tier.FULL},
        "where the model's ops go (ps_host: parameter_server's variables on the host CPU)",
    ),
    Axis("strategy", {"single": Tier.SMOKE, "parameter_server": Tier.SMOKE,
                      "replicated": Tier.SMOKE, "distributed_replicated": Tier.SMOKE},
         "where variables live and how gradients are aggregated"),
    Axis("precision", {"fp32": Tier.SMOKE, "mixed_bf16": Tier.NIGHTLY, "mixed_fp16": Tier.NIGHTLY},
         "Keras mixed-precision policy"),
    Axis(
        "input",
        {"synthetic": Tier.SMOKE, "tfrecord": Tier.SMOKE, "feed": Tier.SMOKE},
        "batches already on the device (synthetic), read from TFRecord files with tf.data "
        "(tfrecord), or host arrays fed at every step (feed)",
    ),
    Axis(
        "preprocess",
        {"host": Tier.SMOKE, "device": Tier.NIGHTLY},
        "where a pipeline's preprocessing runs: the host CPU (the seeds' advice) or the device",
    ),
)
AXIS_BY_NAME: dict[str, Axis] = {axis.name: axis for axis in AXES}
# What each "-"-separated part of a case id is (Case.id): what a reader of stored ids filters by.
ID_PARTS = ("workload", "devices", "workers", "xla", "data_format", "placement", "strategy",
            "precision", "input", "preprocess")
# The markers every case carries: its tier's and its device kind's (select with -m).
MARKERS = {
    "smoke": "in the smoke tier (CPU-sized, minutes)",
    "nightly": "in the nightly tier (GPU runners, every night)",
    "full": "in the full tier only (the whole matrix)",
    "cpu": "runs on CPU devices",
    "gpu": "runs on GPU devices",
}


@dataclass(frozen=True)
class Case:
    workload: str
    device_kind: str
    device_count: int
    xla: str
    data_format: str
    placement: str
    strategy: str
    precision: str
    input: str = "synthetic"
    preprocess: str = "host"
    workers: int = 1
    # Not an axis: set where the machine has fewer devices than the case and the case runs on
    # logical devices split from one physical device. Marked in the id, never compared with
    # physical-device results.
    virtual: bool = False

    @property
    def id(self) -> str:
        """The parts of ID_PARTS, in that order, joined by "-"."""
        return "-".join(
            (
                self.workload,
                f"{'virtual_' if self.virtual else ''}{self.device_kind}{self.device_count}",
                f"workers{self.workers}",
                f"xla_{self.xla}",
                self.data_format,
                self.placement,
                self.strategy,
                self.precision,
                self.input,
                f"prep_{self.preprocess}",
            )
        )

    def axis_values(self) -> dict[str, str]:
        """The workload and every axis value, as strings (for --perf-only and results)."""
        return {name: str(getattr(self, name)) for name in _CASE_AXES}

    def worker_axes(self) -> CaseAxes:
        """The workload and every axis value, as its worker reads them."""
        return CaseAxes(workload=self.workload, device_kind=self.device_kind,
                        device_count=str(self.device_count), xla=self.xla,
                        data_format=self.data_format, placement=self.placement,
                        strategy=self.strategy, precision=self.precision, input=self.input,
                        preprocess=self.preprocess, workers=str(self.workers))

    def tier(self, workloads: Mapping[str, WorkloadInfo]) -> Tier:
        """The lowest tier this case belongs to: the highest tier among its values, raised to
        nightly where the smoke tier does not take the case (`_smoke_takes`)."""
        values = self.axis_values()
        info = workloads[self.workload]
        tier = max([AXIS_BY_NAME[name].values[values[name]] for name in AXIS_BY_NAME]
                   + [info.tier])
        if tier == Tier.SMOKE and not _smoke_takes(self, info):
            return Tier.NIGHTLY
        return tier


# The fields axis_values() reads, listed once: a plan asks for them tens of thousands of times.
_CASE_AXES = tuple(f.name for f in fields(Case) if f.name != "virtual")

# The factors a smoke case may vary away from its workload's default case, each one or more
# axes that only vary together (preprocessing is placed only where a pipeline has some).
# Device kind and count are the runner's, not a choice; a strategy or a model-parallel
# placement brings its own device count.
SMOKE_FACTORS: tuple[tuple[str, ...], ...] = (
    ("xla",), ("data_format",), ("placement", "strategy", "workers"), ("precision",),
    ("input", "preprocess"),
)
VARIED_IN_SMOKE = tuple(axis for factor in SMOKE_FACTORS for axis in factor)


def default_case(case: Case, workload: WorkloadInfo) -> Case:
    """The case with every varied axis at its first value that applies to the workload."""
    return replace(case, xla=next(iter(AXIS_BY_NAME["xla"].values)),
                   data_format=workload.data_formats[0], placement="default",
                   strategy="single", precision="fp32", input="synthetic", preprocess="host",
                   workers=1)


def _smoke_takes(case: Case, workload: WorkloadInfo) -> bool:
    """The smoke tier must cover every axis value in minutes, not their product: the reference
    workload (smoke_matrix) varies one axis at a time from its default case; every other
    workload runs its default case only."""
    return varied_factors(case, workload) <= (1 if workload.smoke_matrix else 0)


def varied_factors(case: Case, workload: WorkloadInfo) -> int:
    default = default_case(case, workload)
    return sum(any(getattr(case, axis) != getattr(default, axis) for axis in factor)
               for factor in SMOKE_FACTORS)


# A validity rule says why a combination is meaningless, or None when it is fine.
ValidityRule = Callable[[Case, WorkloadInfo], "str | None"]


def _format_applies(case: Case, workload: WorkloadInfo) -> str | None:
    if case.data_format not in workload.data_formats:
        return f"{workload.name} has no {case.data_format} layout"
    return None


def _precision_applies(case: Case, workload: WorkloadInfo) -> str | None:
    if case.precision not in workload.precisions:
        return f"{workload.name} does not train in {case.precision}"
    return None


def _strategy_fits_devices(case: Case, workload: WorkloadInfo) -> str | None:
    model_parallel = case.placement in ("towers_split", "alternating")
    if case.strategy == "single" and case.device_count > 1 and not model_parallel:
        return "single with several devices needs a model-parallel placement"
    if case.strategy == "replicated" and case.device_count < 2:
        return "replicated needs at least 2 devices"
    if case.strategy == "parameter_server" and case.workers == 1 and case.device_count < 2:
        return "parameter_server in one process needs at least 2 devices"
    return None


def _workers_fit(case: Case, workload: WorkloadInfo) -> str | None:
    """Which strategies span processes, and how many devices each of their workers drives."""
    if case.strategy == "distributed_replicated":
        if case.workers < 2:
            return "distributed_replicated needs at least 2 workers (one is replicated)"
        if case.device_kind == "cpu" and case.device_count > 1:
            return ("distributed_replicated runs one replica per CPU worker "
                    "(MultiWorkerMirroredStrategy uses a worker's GPUs, or its one CPU)")
        return None
    if case.workers == 1:
        return None
    if case.strategy == "parameter_server":
        if case.input == "feed":
            return ("parameter_server across processes runs steps on remote workers: no host "
                    "array to feed")
        return None
    return f"{case.strategy} runs in one process: workers 1"


def _placement_fits(case: Case, workload: WorkloadInfo) -> str | None:
    if case.placement == "default":
        return None
    if case.placement == "ps_host":
        if case.strategy != "parameter_server":
            return "ps_host places parameter_server's variables: strategy parameter_server"
        return None if case.workers == 1 else (
            "ps_host is the host of one process; across processes the variables live on a ps task")
    if case.strategy != "single":
        return f"{case.placement} is model parallel: it places one replica, so strategy single"
    if case.device_count < 2:
        return f"{case.placement} needs at least 2 devices"
    if case.placement == "towers_split" and not workload.towers:
        return f"{workload.name} has no towers to split"
    if case.xla == "jit":
        return f"{case.placement} spreads the step over devices; jit compiles it for one"
    return None


def _preprocessing_exists(case: Case, workload: WorkloadInfo) -> str | None:
    if case.preprocess == "host":
        return None
    if case.input != "tfrecord":
        return f"{case.input} input has no preprocessing to place on the device"
    if not workload.preprocessing:
        return f"{workload.name} stores its data ready to train: nothing to preprocess"
    return None


VALIDITY_RULES: tuple[ValidityRule, ...] = (
    _format_applies,
    _preprocessing_exists,
    _precision_applies,
    _strategy_fits_devices,
    _workers_fit,
    _placement_fits,
)


def invalid_reason(case: Case, workload: WorkloadInfo) -> str | None:
    for rule in VALIDITY_RULES:
        reason = rule(case, workload)
        if reason:
            return reason
    return None


def generate(
    workloads: Mapping[str, WorkloadInfo],
    tier: Tier,
    only: Mapping[str, Sequence[str]] | None = None,
) -> Iterator[Case]:
    """Every valid case of `tier` (and the tiers below it), restricted by `only` axis values."""
    only = only or {}
    for workload in sorted(workloads) if "workload" not in only else list(only["workload"]):
        info = workloads[workload]
        kept = [_values(axis, info, tier, only.get(axis.name, list(axis.values))) for axis in AXES]
        for kind, count, workers, xla, fmt, placement, strategy, precision, source, prep \
                in itertools.product(*kept):
            case = Case(workload, kind, int(count), xla, fmt, placement, strategy, precision,
                        source, prep, int(workers))
            if invalid_reason(case, info) is None and case.tier(workloads) <= tier:
                yield case


def _values(axis: Axis, info: WorkloadInfo, tier: Tier, chosen: Sequence[str]) -> list[str]:
    """The axis's chosen values that a valid case of `info` at most `tier` may hold. Left out
    before the product, not judged one combination at a time: a value above the tier, and one
    the workload never takes (a layout, a precision, preprocessing). A smoke collection judged
    the nightly product's 250,000 combinations, 1.3 s, and now 0.02 s; the product of what is
    kept is the whole product's order, filtered."""
    takes = {"data_format": info.data_formats, "precision": info.precisions,
             "preprocess": axis.values if info.preprocessing else ("host",)}.get(axis.name,
                                                                                 axis.values)
    return [v for v in axis.values if v in chosen and v in takes and axis.values[v] <= tier]
