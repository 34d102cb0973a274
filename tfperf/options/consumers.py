"""The settings each consumer of the options gets, and no more: a case's worker, the
single-case runner, the A/B runner. PerfOptions (perf.py) makes each from what was parsed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tfperf.gate.statistics import GateSettings
from tfperf.ground.tiers import Tier
from tfperf.options.ab_settings import ABSettings


@dataclass(frozen=True)
class Injection:
    """Test-only: slow the cases whose id contains `pattern` by `fraction` of their round time."""

    fraction: float
    pattern: str = ""


@dataclass(frozen=True)
class CostInjection:
    """Test-only: an A/B's side B compiles `compile_s` longer and holds `memory_mb` more
    through its first round (the compiling phase)."""

    compile_s: float = 0.0
    memory_mb: int = 0


@dataclass(frozen=True)
class YardstickFault:
    """Test-only: every `every`-th yardstick burst of the cases whose id contains `pattern` does
    `factor` bursts' work and reports one's, so reading `factor` times low."""

    factor: int
    every: int = 1
    pattern: str = ""

    def repeat(self, case_id: str, burst: int) -> int:
        """How many bursts' work burst number `burst` (from 0) of the case does."""
        return self.factor if self.pattern in case_id and burst % self.every == 0 else 1


@dataclass(frozen=True)
class Faults:
    """The test-only faults and injections a session puts into its cases, each to prove that a
    check catches it (options/faults.py declares them): one value, none by default."""

    slowdown: Injection | None = None  # --perf-inject-slowdown: the gate and the A/B verdict
    retrace: str | None = None  # --perf-retrace-fault: cases whose id contains it retrace once
    yardstick: YardstickFault | None = None  # --perf-yardstick-fault: disturbed bursts
    cost: CostInjection | None = None  # --perf-inject-cost: side B's costs raised
    numerics: float = 0.0  # --perf-inject-numerics: side B's loss up by this many tolerances
    xla: str | None = None  # --perf-xla-fault: a numerical fault in the XLA equivalence arm


@dataclass(frozen=True)
class WorkerOptions:
    """What every case's worker is told, whichever runner starts it (tfperf.measure.worker_spec)."""

    size: str
    batch_size: int | None
    warmup_rounds: int
    steps_per_round: int
    cache_dir: Path
    all_reduce: str
    file_layout: str
    cluster: str
    faults: Faults = Faults()


def names_case(profile: tuple[str, ...], case_id: str) -> bool:
    """Whether --perf-profile's texts name the case (one is in its id, or is all)."""
    return any(text == "all" or text in case_id for text in profile)


@dataclass(frozen=True)
class MeasureOptions:
    """What the single-case runner uses (tfperf.measure.case_runner): how each case is measured,
    kept and judged."""

    worker: WorkerOptions
    rounds: int
    timeout_s: float
    tier: Tier
    history_dir: Path
    gate: GateSettings
    gating: bool
    rerun: bool
    profile: tuple[str, ...]
    profile_regressions: bool
    profile_dir: Path
    yardstick_every: int = 1  # a yardstick burst before every K-th measured round


@dataclass(frozen=True)
class CompareOptions:
    """What the A/B runner uses (tfperf.ab.ab_runner): each side's worker and how to judge."""

    worker: WorkerOptions
    settings: ABSettings
    timeout_s: float
    tier: Tier
    profile: tuple[str, ...] = ()  # cases profiled whatever their verdict
    profile_findings: bool = True  # a slower, costs_more or numerics_differ case is profiled
    profile_dir: Path = Path(".perf-results/profiles")

    def profiles(self, case_id: str) -> bool:
        return names_case(self.profile, case_id)
