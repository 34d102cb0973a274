"""The regression gate's statistics: is tonight's figure slower than its history, beyond noise
and beyond an effect that matters?

A figure is flagged when its slowdown is both significant (one-sided robust z-score against the
per-run medians of its history: median and MAD) and larger than the effect floor. With little
history (fewer than `min_history` runs) the significance test becomes a percentage threshold
derived from the measured spread, never tighter than the floor. Below `settle` runs the history
cannot yet say what its noise is: the figure is `building history (k of N)` and passes, unless
the change is gross (Metric.gross: a kernel fallback, not noise). Where a relative floor means
nothing at small values (a 0.5 s compile that moves by 0.5 s), an absolute floor holds too.
A flagged throughput is confirmed by a one-sided Mann-Whitney U test of the re-run's rounds
against the stored rounds, and by the re-run being slower by the same effect; scaling
efficiency, peak memory and compile time, one figure per run, by the effect alone. Pure
functions: no files, no TensorFlow.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

# What one figure's verdict can say (tfperf.ground.vocabulary), named here too: a status is one
# word; why it is so (a stale baseline, a history still building) is the verdict's reason.
from tfperf.ground.vocabulary import BUILDING as BUILDING
from tfperf.ground.vocabulary import FASTER as FASTER
from tfperf.ground.vocabulary import FLAGGED as FLAGGED
from tfperf.ground.vocabulary import NO_HISTORY as NO_HISTORY
from tfperf.ground.vocabulary import NOT_CONFIRMED as NOT_CONFIRMED
from tfperf.ground.vocabulary import OK as OK
from tfperf.ground.vocabulary import REGRESSION as REGRESSION
from tfperf.ground.vocabulary import UNSTABLE as UNSTABLE
from tfperf.ground.vocabulary import MetricStatus as MetricStatus

# MAD times this estimates the standard deviation of normal data.
MAD_TO_SIGMA = 1.4826
# A history of identical values has MAD 0: a z-score then needs a least sigma, a fraction of
# the median, or any difference at all would be infinitely significant.
MIN_RELATIVE_SIGMA = 0.002


@dataclass(frozen=True)
class GateSettings:
    z: float = 4.0  # one-sided robust z beyond which a slowdown is significant
    floor: float = 0.05  # the least relative slowdown that fails a case
    # Fewer runs: building history, only a gross change fails (docs/gate.md, "Short histories").
    settle: int = 5
    min_history: int = 10  # fewer runs: the spread-derived percentage threshold instead
    history_limit: int = 30  # the most recent runs that make the baseline
    alpha: float = 0.01  # Mann-Whitney U significance of the re-run's confirmation
    # The least growth of peak memory and of compile time that fails a case (gate.toml's
    # memory_floors and compile_floors override them per case): the A/B cost floors, set
    # from A/A spreads (docs/ab.md).
    memory_floor: float = 0.10
    compile_floor: float = 0.25

    def default_floor(self, metric: Metric) -> float:
        return {"memory_floors": self.memory_floor, "compile_floors": self.compile_floor
                }.get(metric.floors, self.floor)


@dataclass(frozen=True)
class Metric:
    name: str  # the Run attribute
    label: str
    higher_is_better: bool
    floors: str = "floors"  # the table of gate.toml that holds its per-case floors
    # While the history is building: worse by this factor fails anyway (a kernel fallback, XLA
    # off by mistake), beyond any session-to-session ratio measured (docs/gate.md).
    gross: float = 2.0
    absolute: float = 0.0  # the least change, in the figure's units, that counts (0: none)
    unit: str = ""


# The gross factors and absolute floors, provisional: beside a busy neighbour on the AVX2-only
# EPYC, 8 smoke sessions (benchmarks/gate_spreads.py) moved throughput by up to 1.61x, scaling
# 1.32x, peak memory 1.17x and 32 MiB, compile time 2.19x and 3.0 s (0.8 s on a 1 s compile).
# docs/gate.md, "Short histories", has the table they are to be set from.
THROUGHPUT = Metric("examples_per_sec", "throughput", True)
METRICS = (THROUGHPUT, Metric("scaling_efficiency", "scaling efficiency", True),
           Metric("peak_memory_bytes", "peak memory", False, "memory_floors", gross=1.5,
                  absolute=64 * 2**20, unit="B"),
           Metric("compile_cpu_s", "compile time", False, "compile_floors", gross=3.0,
                  absolute=1.5, unit="s"))
FLOOR_TABLES = ("floors", "memory_floors", "compile_floors")



@dataclass(frozen=True)
class MetricVerdict:
    metric: Metric
    status: MetricStatus
    now: float
    baseline: float | None = None  # the history's median
    change: float | None = None  # now over baseline, minus one
    z: float | None = None  # slowdown in robust sigmas (positive: slower)
    threshold: float | None = None  # the relative slowdown that counts as an effect
    method: str = ""
    band: tuple[float, float] | None = None  # the noise band, in the metric's units
    p_value: float | None = None  # the confirmation's
    note: str = ""

    @property
    def slowdown(self) -> float:
        """Relative worsening: positive when slower (or, for memory, larger)."""
        if self.change is None:
            return 0.0
        return -self.change if self.metric.higher_is_better else self.change

    def described(self) -> str:
        """The figure's verdict with its reason: the change, the threshold and how it was
        set, the history it was judged against, and the confirmation's word."""
        if self.baseline is None or self.change is None:
            return f"{self.metric.label}: {self.status} ({self.note or self.method})"
        said = (f"{self.metric.label} {self.change:+.1%} ({_amount(self.now, self.metric)} "
                f"against the median {_amount(self.baseline, self.metric)}")
        if self.threshold is not None:
            said += f"; threshold {self.threshold:.1%}"
        said += f": {self.method})"
        word = {BUILDING: "", OK: "", UNSTABLE: "", FASTER: ": baseline stale"}.get(self.status,
                                                                    f": {self.status}")
        return said + word + (f"; {self.note}" if self.note else "")


def _amount(value: float, metric: Metric) -> str:
    if metric.unit == "B":
        return f"{value / 2**20:.1f} MiB"
    return f"{value:.3g}{' ' + metric.unit if metric.unit else ''}"


def _gross_threshold(metric: Metric) -> float:
    """The relative worsening a change by the gross factor is."""
    return 1 - 1 / metric.gross if metric.higher_is_better else metric.gross - 1


def relative_sigma(values: Sequence[float]) -> float:
    """Robust relative spread: MAD, scaled to a standard deviation, over the median."""
    data = np.asarray(values, dtype=float)
    median = float(np.median(data))
    if len(data) < 2 or median == 0:
        return 0.0
    if len(data) == 2:  # MAD of two values is half their gap: the same estimate, said plainly
        return MAD_TO_SIGMA * abs(float(data[1] - data[0])) / 2 / abs(median)
    return MAD_TO_SIGMA * float(np.median(np.abs(data - median))) / abs(median)


def within_run_spread(rounds_per_run: Sequence[Sequence[float]]) -> float:
    """The typical relative spread of rounds inside one run (the median over runs)."""
    spreads = [relative_sigma(r) for r in rounds_per_run if len(r) >= 3]
    return float(np.median(spreads)) if spreads else 0.0


def judge(metric: Metric, now: float, history: Sequence[float], settings: GateSettings,
          floor: float, within_spread: float = 0.0, kept_spread: float | None = None
          ) -> MetricVerdict:
    """Flag, pass or call stale one figure against its history's per-run values."""
    if not history:
        return MetricVerdict(metric, NO_HISTORY, now, note="no comparable runs stored")
    baseline = float(np.median(history))
    change = now / baseline - 1
    sign = 1.0 if metric.higher_is_better else -1.0
    # A change smaller than the figure's absolute floor is not one, whatever its share.
    absolute = metric.absolute / abs(baseline) if baseline else 0.0
    if len(history) < settings.settle:
        # A case's floor above the gross factor (gate.toml, for a noisy case) holds here too.
        effect = max(_gross_threshold(metric), absolute, floor)
        worse = -sign * change
        building = f"building history ({len(history)} of {settings.settle})"
        method = f"{building}: only a change of {metric.gross:g}x fails"
        if metric.absolute:
            method += f" and of {_amount(metric.absolute, metric)}"
        status: MetricStatus = FLAGGED if worse > effect else BUILDING
        return MetricVerdict(metric, status, now, baseline, change, None, effect, method,
                             (baseline * (1 - effect), baseline * (1 + effect)))
    floor_here = max(floor, absolute)
    series = max(relative_sigma(history), MIN_RELATIVE_SIGMA)
    if settings.z * series > floor_here:
        return _unstable(metric, now, baseline, change, series, floor_here, len(history),
                         settings)
    if len(history) >= settings.min_history:
        sigma = series * abs(baseline)
        z = sign * (baseline - now) / sigma
        effect = floor_here
        method = f"robust z beyond {settings.z:g} and the floor {effect:.1%}, {len(history)} runs"
        slower = z > settings.z and -sign * change > effect
        faster = z < -settings.z and sign * change > effect
        band_half = settings.z * sigma
    else:
        # Fewer runs: their spread is a rough estimate, so the rounds' own spread and a marked
        # change's kept spread widen the threshold too.
        spread = max(series, within_spread, kept_spread or 0.0)
        effect = max(floor_here, settings.z * spread)
        z = -sign * change / spread
        method = (f"the larger of spread {spread:.1%} x z {settings.z:g} and the floor "
                  f"{floor_here:.1%}, {len(history)} runs")
        slower = -sign * change > effect
        faster = sign * change > effect
        band_half = effect * abs(baseline)
    status = FLAGGED if slower else FASTER if faster else OK
    return MetricVerdict(metric, status, now, baseline, change, z, effect, method,
                         (baseline - band_half, baseline + band_half))


def _unstable(metric: Metric, now: float, baseline: float, change: float, spread: float,
              floor: float, runs: int, settings: GateSettings) -> MetricVerdict:
    """A figure whose runs spread too much for its floor: a z-score could only flag changes
    beyond z x spread, wider than the floor the case is meant to hold, so it is not gated (a
    gate that fires on noise is switched off; one that quietly widens hides that it cannot
    judge). Only a gross change fails, as while a history builds. The history is the recent
    runs, so once they spread less the figure is judged again."""
    needed = settings.z * spread
    effect = max(_gross_threshold(metric), floor)
    worse = -change if metric.higher_is_better else change
    method = (f"unstable: its runs spread {spread:.1%} (robust, {runs} runs), so z "
              f"{settings.z:g} holds {needed:.1%}, not its floor {floor:.1%}; gated again once "
              f"they spread at most {floor / settings.z:.1%}, or with a floor of {needed:.0%} "
              f"in baselines/gate.toml; meanwhile only a change of {metric.gross:g}x fails")
    status: MetricStatus = FLAGGED if worse > effect else UNSTABLE
    return MetricVerdict(metric, status, now, baseline, change, None, effect, method,
                         (baseline * (1 - effect), baseline * (1 + effect)))


def confirm(verdict: MetricVerdict, again: float, again_rounds: Sequence[float],
            stored_rounds: Sequence[float], settings: GateSettings) -> MetricVerdict:
    """Confirm a flagged figure with a second measurement (a re-run, or the same run when
    re-runs are off): slower again by the same effect, and for throughput, its rounds slower
    than the stored rounds by a one-sided Mann-Whitney U test."""
    assert verdict.status == FLAGGED and verdict.baseline and verdict.threshold is not None
    sign = 1.0 if verdict.metric.higher_is_better else -1.0
    slowdown = -sign * (again / verdict.baseline - 1)
    p_value = None
    significant = True
    if verdict.metric == THROUGHPUT and again_rounds and stored_rounds:
        # Imported here: scipy.stats takes 1.5 s, and most processes that import this module never
        # judge.
        from scipy.stats import mannwhitneyu

        p_value = float(mannwhitneyu(again_rounds, stored_rounds, alternative="less").pvalue)
        significant = p_value < settings.alpha
    confirmed = significant and slowdown > verdict.threshold
    note = (f"again {slowdown:+.1%} worse" + (f", Mann-Whitney p={p_value:.2g}"
                                                if p_value is not None else ""))
    return replace(verdict, status=REGRESSION if confirmed else NOT_CONFIRMED,
                   p_value=p_value, note=note)
