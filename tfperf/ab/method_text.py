"""What a session report says of its method: its rule and looks, its duets, its second turn."""

from __future__ import annotations

import numpy as np

from tfperf.ab import random_effects, trimmed_bounds
from tfperf.ab.verdict import confidences
from tfperf.options.ab_settings import BONFERRONI, CLUSTERS_T, DUET_RULES, T_RULES, TRIMMED, ABSettings


def looks_rule(settings: ABSettings) -> str:
    """How a case is judged, and how wide each look's interval is."""
    if settings.look_rule == TRIMMED:
        level = trimmed_bounds.table_level(settings)
        critical = f"calibrated by simulation for {level:.2%} a kind" if level is not None else \
            "the spending's z as Student's t on the duets' degrees of freedom (no calibrated " \
            "table for this schedule or level)"
        return (f"the 25% trimmed mean of all pairs with its variance summed by duet (each "
                f"worker process's own speed covered without a test), `same` judged at "
                f"{', '.join(map(str, settings.same_looks()))} pairs and `slower`/`faster` at "
                f"every look to {settings.max_pairs}, each kind wrong at most "
                f"{settings.alpha / 2:.1%} of the time, with critical values {critical}")
    if settings.look_rule in DUET_RULES:
        df = "on the duets' degrees of freedom" if settings.look_rule in T_RULES else \
            "on degrees of freedom chosen by whether that floor binds (the `duets` rule)"
        power = f" to the power {settings.spending_power:g}" if settings.spending_power != 1 \
            else ""
        spread = "with the variance from their centres' own spread" \
            if settings.look_rule == CLUSTERS_T else \
            f"in a random-effects model (a duet's own offset at least {settings.min_duet_sd:.1%} SD)"
        return (f"each worker process a unit: duets' Hodges-Lehmann estimates {spread}, "
                f"Student's t {df}, looks at "
                f"{', '.join(map(str, settings.looks()))} pairs with {settings.alpha:.0%} "
                f"spent as the information{power} grows (each case's intervals say their "
                f"level)")
    levels = ", ".join(f"{c:.1%} at {n}" for n, c in zip(settings.looks(),
                                                          confidences(settings), strict=True))
    how = "alpha spent in proportion to the pairs" if settings.look_rule != BONFERRONI else \
        "Bonferroni"
    return (f"pairs taken as independent: Hodges-Lehmann with the Wilcoxon signed-rank "
            f"interval, {levels} pairs ({settings.alpha:.0%} over all looks: {how})")


def method_lines(fits: list[random_effects.Fit], settings: ABSettings) -> list[str]:
    """What the session says of its own method from its cases' random-effects fits: the duets'
    offsets, the second turn, the yardstick, medians over its cases."""
    fitted = [(None, fit) for fit in fits]
    if not fitted:
        return []
    duets = np.median([fit.duets for _, fit in fitted])
    covered = "covered by the interval" if settings.look_rule in (*DUET_RULES, TRIMMED) else \
        "averaged in the estimate, not covered by the interval (pairs judged as independent)"
    lines = [f"each duet's own speed: B/A spread {np.median([f.duet_sd for _, f in fitted]):.1%} "
             f"between duets beyond sampling, median over cases; {duets:.0f} duets a case "
             f"(median), {covered}",
             f"second turn: a side's speed in its pair's second turn over its first "
             f"{np.median([np.exp(f.order_effect) for _, f in fitted]) - 1:+.2%}, median over "
             "cases (counterbalanced within each duet, so it moves no estimate)"]
    shares = [f.yardstick_share for _, f in fitted if f.yardstick_share is not None]
    if shares:
        used = "used" if settings.adjust_yardstick else "not used"
        lines.append(f"yardstick: would explain {np.median(shares):.1%} of the pairs' variance "
                     f"within duets, median over cases ({used} as a covariate)")
    return lines
