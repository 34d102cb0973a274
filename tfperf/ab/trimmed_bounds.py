"""The `trimmed` rule's critical values: each look's t for `same` and for `slower`/`faster`.

The spending's bounds (spending.py) assume that the looks' statistics move as a Brownian motion
of known variance. Turned into Student's t on each look's D - 1 degrees of freedom, each look
alone spends what it should, but the looks together spend more: each divides by its own
estimated SE, so their statistics are less correlated than the model says (at the floor's edge
`same` was wrong in up to 6.4% of simulated sessions, not 5%). So on the default schedule each
look's t is found by simulation instead: sessions drawn at no change in each of the model's
cells (pair SD 1-8%, duets' own speeds 0-2.5% apart, normal and Student's t5 tails), and at
each look the value at which the share of sessions whose estimate over its SE first crossed it
by that look is that kind's spending; the largest over the cells
(`python benchmarks/ab_limit_bounds.py --alpha A`, benchmarks/results/ab_limit.md). Where a
look spends too little for the simulation to find its bound, the spending's t stands.

Tables exist (trimmed_tables.py) for the default schedule at a few levels, for a last look of
1,024 pairs (the pull-request job's) at the default level, and for the default schedule of
sessions kept before 2026-12-07, so that they are judged again as they were. A session at
another level uses the table of the next stricter one; on another schedule (other duets, relays
or last look), or below the strictest table, the spending's t stands, and the session report
says so.
"""

from __future__ import annotations

import functools

import numpy as np

from tfperf.ab import spending
from tfperf.ab.trimmed_tables import INF, TABLES, Schedule
from tfperf.options.ab_settings import ABSettings

# What every table shares, the defaults' (a session whose MIN is larger only drops looks, which
# keeps every later look's share); what they differ in is their Schedule.
_DEFAULTS = ABSettings()
SHARED = ("duets", "relay", "relay_until", "trim", "same_power")


def schedule_of(settings: ABSettings) -> Schedule:
    return Schedule(settings.max_pairs, settings.late_relay, settings.direction_power,
                    settings.direction_linear)


def table_level(settings: ABSettings) -> float | None:
    """The one-sided level whose calibrated table judges these settings; None: the spending's t."""
    if any(getattr(settings, name) != getattr(_DEFAULTS, name) for name in SHARED):
        return None
    wanted = settings.alpha / 2
    levels = [level for schedule, level in TABLES
              if schedule == schedule_of(settings) and level <= wanted * (1 + 1e-9)]
    return max(levels) if levels else None


@functools.cache
def _spending_z(looks: tuple[int, ...], alpha: float, power: float,
                linear: float = 0.0) -> dict[int, float]:
    fractions = tuple(n / looks[-1] for n in looks)
    shares = tuple(float(s) for s in spending.power_shares(np.array(fractions), power, linear))
    return dict(zip(looks, spending.bounds(fractions, alpha, shares), strict=True))


def spending_t(settings: ABSettings, look: int, duets: int) -> tuple[float, float]:
    """The spending's z of the look turned into Student's t on D - 1 degrees of freedom, for
    `same` (infinite where it may not say `same`) and for `slower`/`faster`."""
    from scipy.special import ndtr, stdtrit

    same = _spending_z(tuple(settings.same_looks()), settings.alpha, settings.same_power)
    # `slower` and `faster` are judged at every look, `same` only at its own.
    direction = _spending_z(tuple(settings.looks()), settings.alpha, settings.direction_power,
                            settings.direction_linear)

    def as_t(z: float) -> float:
        return float(-stdtrit(duets - 1, ndtr(-z)))

    return (as_t(same[look]) if look in same else INF,
            as_t(direction[look]) if look in direction else INF)


def critical(settings: ABSettings, look: int, duets: int) -> tuple[float, float]:
    """The look's critical t for `same` and for `slower`/`faster`."""
    level = table_level(settings)
    if level is None:
        return spending_t(settings, look, duets)
    found = {n: (same, direction)
             for n, same, direction in TABLES[schedule_of(settings), level]}
    if look not in found:
        raise ValueError(f"no calibrated critical values at {look} pairs")
    return found[look]
