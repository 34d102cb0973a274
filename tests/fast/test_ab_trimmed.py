"""The trimmed rule, every new A/B session's, on simulated pairs judged by the verdict code itself
(seeded: the same sessions every run): its schedule, its estimate and variance, its critical
values, and that a decided verdict is wrong in at most 5% of sessions of each kind wherever
per-pair noise, heavy tails and each process's own speed (0 to 2.5% apart) put it."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from scipy.stats import binomtest

from tfperf.ab import method_text, simulate, spending, trimmed, trimmed_bounds, trimmed_tables, verdict
from tfperf.ab.simulate import Conditions
from tfperf.options.ab_settings import ABSettings

DEFAULTS = ABSettings()
SESSIONS = 300


def test_the_schedule_looks_every_quarter_doubling_and_says_same_from_192_pairs() -> None:
    assert DEFAULTS.look_rule == "trimmed" and (DEFAULTS.min_pairs, DEFAULTS.max_pairs) == (32, 2432)
    looks = DEFAULTS.looks()
    assert looks[:5] == [40, 48, 56, 64, 80] and looks[-3:] == [1720, 2048, 2432]
    assert DEFAULTS.same_looks() == [192, 224, 256, 288, 320, 384, 448, 512, 640, 768, 1024]
    assert all(n % (2 * DEFAULTS.duets) == 0 for n in looks)  # both orders on every duet
    # A smaller MAX scales the schedule, `same` looks too; a larger MIN only drops looks.
    assert replace(DEFAULTS, max_pairs=1024).same_looks()[::5] == [96, 192, 512]
    assert replace(DEFAULTS, min_pairs=16, max_pairs=64).looks() == [16, 24, 32, 40, 48, 56, 64]
    assert set(replace(DEFAULTS, min_pairs=200).looks()) <= set(looks)


def test_duets_relay_every_16_pairs_then_every_64_after_512() -> None:
    numbers = DEFAULTS.duet_numbers(2432)
    sizes = np.bincount(numbers)[1:]
    # 32 early duets, then 28 of 64 pairs and the last 4 with the 32 pairs left.
    assert set(sizes[:32]) == {16} and set(sizes[32:60]) == {64} and set(sizes[60:]) == {32}
    assert DEFAULTS.relays(512) == 28 and DEFAULTS.relays(2432) == 60
    due = [i for i in range(800) if DEFAULTS.relay_due(i)]
    assert due[:4] == [64, 65, 66, 67] and 512 in due and 640 not in due and 768 in due
    # A kept file's schedule, one relay length throughout, is what it was.
    kept = replace(DEFAULTS, look_rule="duets-t", relay=6, late_relay=0, max_pairs=1024)
    assert np.array_equal(kept.duet_numbers(1024),
                          np.arange(1024) % 4 + 1 + 4 * (np.arange(1024) // 4 // 6))


def test_the_directions_spend_late_but_keep_a_little_early_for_a_clear_change() -> None:
    t = np.array([80, 1024, 2048, 2432]) / 2432
    shares = spending.power_shares(t, DEFAULTS.direction_power, DEFAULTS.direction_linear)
    assert shares[-1] == pytest.approx(1.0) and np.all(np.diff(shares) > 0)
    # By 80 pairs the linear 1% spends more than (n / 2048)^3 did, t^5 alone 1e-7 of it.
    assert shares[0] > (80 / 2048) ** 3 > 1000 * t[0] ** 5
    # ... and leaves the last two looks nearly what t^5 alone would.
    assert shares[2] == pytest.approx(t[2] ** 5, abs=0.01)


def test_the_trimmed_mean_ignores_a_wild_pair_and_its_variance_sums_by_duet() -> None:
    draw = np.random.default_rng(3)
    y = draw.normal(0.0, 0.02, (1, 64))
    wild = y.copy()
    wild[0, 5] = 2.0
    assert trimmed.trimmed_mean(wild, 0.25)[0][0] == pytest.approx(
        trimmed.trimmed_mean(y, 0.25)[0][0], abs=0.003)
    # Each duet's pairs share an offset: their influences add within the duet, and the
    # sandwich sees it where treating the pairs as independent would not.
    duets = np.repeat(np.arange(8), 8)
    offsets = np.repeat(draw.normal(0.0, 0.05, 8), 8)[None, :]
    _, influence = trimmed.trimmed_mean(y + offsets, 0.25)
    variance, count = trimmed.sandwich(influence, duets)
    independent = (influence ** 2).sum() / 64 ** 2
    assert count == 8 and variance[0] > 3 * independent


def test_a_calibrated_table_judges_the_default_schedule_at_its_level_or_a_stricter_one() -> None:
    assert trimmed_bounds.table_level(DEFAULTS) == 0.05
    assert trimmed_bounds.table_level(replace(DEFAULTS, alpha=0.3)) == 0.05
    assert trimmed_bounds.table_level(replace(DEFAULTS, max_pairs=512)) is None
    assert trimmed_bounds.table_level(replace(DEFAULTS, duets=6)) is None
    # A session kept on the schedule before 2026-12-07 is judged by its own table, not a mix.
    before = replace(DEFAULTS, max_pairs=2048, late_relay=32, direction_power=3.0,
                     direction_linear=0.0)
    assert trimmed_bounds.table_level(before) == 0.05
    assert trimmed_bounds.table_level(replace(before, late_relay=64)) is None
    # Each table covers its schedule's looks, and is stricter than the spending's t where the
    # simulation found it.
    for (schedule, level), table in trimmed_tables.TABLES.items():
        settings = replace(DEFAULTS, alpha=2 * level, **schedule._asdict())
        assert [look for look, _, _ in table] == settings.looks()
        for look, same_t, direction_t in table:
            duets = int(settings.duet_numbers(look).max())
            spent_same, spent_direction = trimmed_bounds.spending_t(settings, look, duets)
            assert direction_t >= spent_direction - 0.3 and (
                math.isinf(same_t) == math.isinf(spent_same))
    assert "calibrated by simulation for 5.00% a kind" in method_text.looks_rule(DEFAULTS)
    assert "no calibrated table" in method_text.looks_rule(replace(DEFAULTS, max_pairs=512))


# Per-pair SD 1% to 8% (the 2-core hosts' pairs: 4-8% robust, heavy-tailed), each duet's own
# offset 0 to 2.5% (SD, log B/A), a second turn that runs 1% faster.
GRID = [Conditions(1.0, 0.01, 0.0), Conditions(1.0, 0.01, 0.025),
        Conditions(1.0, 0.025, 0.01, heavy_tails=True), Conditions(1.0, 0.08, 0.005, heavy_tails=True),
        Conditions(1.0, 0.04, 0.01, second_turn=0.01)]


def _upper(count: int) -> float:
    return float(binomtest(count, SESSIONS).proportion_ci(0.95, "exact").high)


@pytest.mark.parametrize("conditions", GRID, ids=lambda c: (
    f"pair{c.pair_sd:.1%}-duet{c.duet_sd:.1%}{'-heavy' if c.heavy_tails else ''}"
    f"{'-second_turn' if c.second_turn else ''}"))
def test_a_decided_verdict_is_wrong_in_at_most_5_percent(conditions: Conditions) -> None:
    """`slower` or `faster` at half the floor, and `same` at 1.2 floors: the 95% binomial upper
    bound of each, over 300 sessions, at most 5%. (At the floor's edge itself each reaches its
    5%: benchmarks/results/ab_limit.md.)"""
    floor = DEFAULTS.floor
    near = simulate.counts(simulate.statuses(replace(conditions, ratio=1 - floor / 2), DEFAULTS,
                                             SESSIONS, 21))
    beyond = simulate.counts(simulate.statuses(replace(conditions, ratio=1 - 1.2 * floor),
                                               DEFAULTS, SESSIONS, 22))
    assert _upper(near["slower"] + near["faster"]) <= 0.05, near
    assert _upper(beyond["same"]) <= 0.05, beyond


def test_an_unchanged_case_says_same_near_192_pairs_and_a_5_percent_slowdown_sooner() -> None:
    """At the 2-core hosts' noise (per-pair 6%, heavy-tailed, duets 0.5% apart)."""
    noise = Conditions(1.0, 0.06, 0.005, heavy_tails=True)
    same = simulate.verdicts(noise, DEFAULTS, 100, seed=8)
    assert sum(v.status == "same" for v in same) >= 90
    assert np.median([v.pairs for v in same]) <= 256
    slower = simulate.verdicts(replace(noise, ratio=0.95), DEFAULTS, 100, seed=9)
    assert all(v.status == "slower" for v in slower)
    assert np.median([v.pairs for v in slower]) <= 192


def test_an_undecided_verdict_says_what_kept_it_open_and_what_would_decide_it() -> None:
    pairs = simulate.session(Conditions(0.985, 0.06, 0.008), DEFAULTS, np.random.default_rng(2))
    found = verdict.judge(pairs.head(256), DEFAULTS)
    assert found.status == "undecided" and found.duets == 16
    said = found.describe()
    assert "kept open by per-pair noise (SD" in said and "the duets' own speeds (over 16" in said
    assert found.more_pairs and f"about {found.more_pairs} more pairs" in said
    assert 0.9 < found.confidence < 1 and found.low < found.ratio < found.high
