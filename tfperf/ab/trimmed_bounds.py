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

Tables exist for the default schedule at a few levels, and for a last look of 1,024 pairs (the
pull-request job's) at the default level. A session at another level uses the table of the next
stricter one; on another schedule (other duets, relays or last look), or below the strictest
table, the spending's t stands, and the session report says so.
"""

from __future__ import annotations

import functools
import math

from tfperf.ab import spending
from tfperf.options.ab_settings import ABSettings

# What the tables were computed for: the default schedule (a session whose MIN is larger only
# drops looks, which keeps every later look's share).
_DEFAULTS = ABSettings()
SCHEDULE = ("duets", "relay", "late_relay", "relay_until", "trim", "same_power",
            "direction_power")
INF = math.inf
# (MAX, one-sided alpha): (look, t `same` (INF: no `same` there), t `slower`/`faster`) per look.
# Found by `python benchmarks/ab_limit_bounds.py -n N --alpha A --seed S` on 2026-12-06: 0.05 at
# -n 20000 --seed 178; 0.025, 0.01 at 20000 (seeds 182, 183); 0.005 at 24000 (184); 0.0025 at
# 30000 (185); 0.001 at 60000 (186); a last look of 1,024 pairs at 0.05, -n 20000 --seed 187 --last
# 1024 --same-looks 96 112 128 144 160 192 224 256 320 384 512 (benchmarks/data/ab_limit/
# bounds.*.jsonl.gz).
TABLES: dict[tuple[int, float], tuple[tuple[int, float, float], ...]] = {
    (2048, 0.05): (
        (32, INF, 179.468), (40, INF, 169.439), (48, INF, 146.146), (56, INF, 127.941),
        (64, INF, 113.72), (80, INF, 13.089), (88, INF, 13.003), (104, INF, 11.798),
        (128, INF, 10.597), (152, INF, 6.976), (184, INF, 6.514), (192, 2.331, 6.634),
        (216, INF, 5.496), (224, 2.627, 5.546), (256, 2.722, 5.205), (288, 2.706, 4.715),
        (304, INF, 4.706), (320, 2.756, 4.649), (360, INF, 4.255), (384, 2.675, 4.216),
        (432, INF, 3.931), (448, 2.655, 3.953), (512, 2.617, 3.66), (608, INF, 3.434),
        (640, 2.589, 3.405), (728, INF, 3.242), (768, 2.591, 3.17), (864, INF, 3.274),
        (1024, 2.398, 3.016), (1216, INF, 2.889), (1448, INF, 2.342), (1720, INF, 2.082),
        (2048, INF, 1.804),
    ),
    (2048, 0.025): (
        (32, INF, 226.119), (40, INF, 214.275), (48, INF, 184.948), (56, INF, 162.022),
        (64, INF, 144.108), (80, INF, 14.524), (88, INF, 14.449), (104, INF, 13.111),
        (128, INF, 11.784), (152, INF, 7.535), (184, INF, 7.048), (192, 2.773, 7.185),
        (216, INF, 5.885), (224, 3.038, 5.942), (256, 3.182, 5.586), (288, 3.147, 5.036),
        (304, INF, 5.031), (320, 3.219, 4.974), (360, INF, 4.545), (384, 3.031, 4.509),
        (432, INF, 4.205), (448, 2.976, 4.23), (512, 2.953, 3.924), (608, INF, 3.658),
        (640, 2.9, 3.67), (728, INF, 3.449), (768, 2.873, 3.437), (864, INF, 3.243),
        (1024, 2.709, 3.283), (1216, INF, 3.145), (1448, INF, 2.666), (1720, INF, 2.402),
        (2048, INF, 2.134),
    ),
    (2048, 0.01): (
        (32, INF, 306.894), (40, INF, 292.151), (48, INF, 252.378), (56, INF, 221.282),
        (64, INF, 196.978), (80, INF, 16.647), (88, INF, 16.591), (104, INF, 15.051),
        (128, INF, 13.538), (152, INF, 8.319), (184, INF, 7.796), (192, 3.354, 7.958),
        (216, INF, 6.416), (224, 3.49, 6.483), (256, 3.602, 6.104), (288, 3.505, 5.467),
        (304, INF, 5.466), (320, 3.526, 5.41), (360, INF, 4.928), (384, 3.378, 4.896),
        (432, INF, 4.562), (448, 3.387, 4.593), (512, 3.257, 4.266), (608, INF, 3.991),
        (640, 3.318, 4.01), (728, INF, 3.783), (768, 3.286, 3.775), (864, INF, 3.578),
        (1024, 3.198, 3.345), (1216, INF, 3.263), (1448, INF, 3.118), (1720, INF, 3.085),
        (2048, INF, 2.595),
    ),
    (2048, 0.005): (
        (32, INF, 386.664), (40, INF, 369.281), (48, INF, 319.19), (56, INF, 280.033),
        (64, INF, 249.422), (80, INF, 18.444), (88, INF, 18.406), (104, INF, 16.694),
        (128, INF, 15.02), (152, INF, 8.95), (184, INF, 8.398), (192, 3.86, 8.58),
        (216, INF, 6.832), (224, 3.866, 6.907), (256, 3.985, 6.51), (288, 3.851, 5.798),
        (304, INF, 5.801), (320, 3.872, 5.744), (360, INF, 5.219), (384, 3.685, 5.189),
        (432, INF, 4.831), (448, 3.608, 4.865), (512, 3.553, 4.521), (608, INF, 4.238),
        (640, 3.559, 4.26), (728, INF, 4.027), (768, 3.378, 4.023), (864, INF, 3.822),
        (1024, 3.416, 3.59), (1216, INF, 3.374), (1448, INF, 3.297), (1720, INF, 3.189),
        (2048, INF, 2.902),
    ),
    (2048, 0.0025): (
        (32, INF, 487.167), (40, INF, 466.688), (48, INF, 403.598), (56, INF, 354.29),
        (64, INF, 315.739), (80, INF, 20.425), (88, INF, 20.409), (104, INF, 18.505),
        (128, INF, 16.653), (152, INF, 9.617), (184, INF, 9.032), (192, 4.387, 9.237),
        (216, INF, 7.261), (224, 4.242, 7.344), (256, 4.368, 6.928), (288, 4.191, 6.134),
        (304, INF, 6.141), (320, 4.214, 6.084), (360, INF, 5.511), (384, 3.995, 5.483),
        (432, INF, 5.098), (448, 3.903, 5.136), (512, 3.836, 4.773), (608, INF, 4.48),
        (640, 3.692, 4.507), (728, INF, 4.266), (768, 3.646, 4.265), (864, INF, 4.06),
        (1024, 3.488, 3.826), (1216, INF, 3.61), (1448, INF, 3.407), (1720, INF, 3.274),
        (2048, INF, 3.295),
    ),
    (2048, 0.001): (
        (32, INF, 661.189), (40, INF, 635.791), (48, INF, 550.194), (56, INF, 483.324),
        (64, INF, 431.033), (80, INF, 23.36), (88, INF, 23.379), (104, INF, 21.187),
        (128, INF, 19.07), (152, INF, 10.558), (184, INF, 9.926), (192, 4.924, 10.164),
        (216, INF, 7.852), (224, 4.745, 7.946), (256, 4.879, 7.501), (288, 4.638, 6.589),
        (304, INF, 6.6), (320, 4.661, 6.542), (360, INF, 5.901), (384, 4.397, 5.876),
        (432, INF, 5.451), (448, 4.281, 5.494), (512, 4.197, 5.104), (608, INF, 4.796),
        (640, 4.038, 4.828), (728, INF, 4.575), (768, 3.984, 4.578), (864, INF, 4.365),
        (1024, 3.812, 4.129), (1216, INF, 3.91), (1448, INF, 3.708), (1720, INF, 3.727),
        (2048, INF, 3.502),
    ),
    (1024, 0.05): (
        (32, INF, 89.724), (40, INF, 83.653), (48, INF, 71.969), (56, INF, 62.853),
        (64, INF, 55.74), (80, INF, 9.519), (88, INF, 9.41), (96, 2.746, 9.098), (104, INF, 8.795),
        (112, 3.334, 8.516), (128, 3.374, 7.806), (144, 3.087, 5.642), (152, INF, 5.628),
        (160, 3.005, 5.541), (184, INF, 5.12), (192, 2.917, 5.156), (216, INF, 4.386),
        (224, 2.792, 4.414), (256, 2.784, 4.107), (304, INF, 3.648), (320, 2.611, 3.657),
        (360, INF, 3.363), (384, 2.529, 3.315), (432, INF, 3.228), (512, 2.358, 3.193),
        (608, INF, 2.702), (728, INF, 2.391), (864, INF, 2.104), (1024, INF, 1.833),
    ),
}


def table_level(settings: ABSettings) -> float | None:
    """The one-sided level whose calibrated table judges these settings; None: the spending's t."""
    if any(getattr(settings, name) != getattr(_DEFAULTS, name) for name in SCHEDULE):
        return None
    wanted = settings.alpha / 2
    levels = [level for last, level in TABLES
              if last == settings.max_pairs and level <= wanted * (1 + 1e-9)]
    return max(levels) if levels else None


@functools.cache
def _spending_z(looks: tuple[int, ...], alpha: float, power: float) -> dict[int, float]:
    fractions = tuple(n / looks[-1] for n in looks)
    return dict(zip(looks, spending.bounds(fractions, alpha, tuple(f ** power for f in fractions)),
                    strict=True))


def spending_t(settings: ABSettings, look: int, duets: int) -> tuple[float, float]:
    """The spending's z of the look turned into Student's t on D - 1 degrees of freedom, for
    `same` (infinite where it may not say `same`) and for `slower`/`faster`."""
    from scipy.special import ndtr, stdtrit

    same = _spending_z(tuple(settings.same_looks()), settings.alpha, settings.same_power)
    # `slower` and `faster` are judged at every look, `same` only at its own.
    direction = _spending_z(tuple(settings.looks()), settings.alpha, settings.direction_power)

    def as_t(z: float) -> float:
        return float(-stdtrit(duets - 1, ndtr(-z)))

    return (as_t(same[look]) if look in same else INF,
            as_t(direction[look]) if look in direction else INF)


def critical(settings: ABSettings, look: int, duets: int) -> tuple[float, float]:
    """The look's critical t for `same` and for `slower`/`faster`."""
    level = table_level(settings)
    if level is None:
        return spending_t(settings, look, duets)
    found = {n: (same, direction) for n, same, direction in TABLES[settings.max_pairs, level]}
    if look not in found:
        raise ValueError(f"no calibrated critical values at {look} pairs")
    return found[look]
