"""benchmarks/ab_limit.py and ab_bound.py: the candidate's estimate and its sandwich variance over
duets on a tiny known sample, its schedule and its separate spending, its verdicts where the
answer is plain, and the oracle's arithmetic. No TensorFlow, no processes."""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

from tests.helpers import benchmark_scripts

# Imported by name, as a study imports its siblings (benchmark_scripts puts their folder on the
# path): ab_limit's dataclasses need their module registered.
assert benchmark_scripts.BENCHMARKS
ab_limit = importlib.import_module("ab_limit")
ab_bound = importlib.import_module("ab_bound")


def test_the_trimmed_mean_and_its_influences_on_a_known_sample() -> None:
    y = np.array([[0.0, 1, 2, 3, 4, 5, 6, 100]])  # 2 cut from each end of 8
    centre, influence = ab_limit.trimmed(y)
    assert centre[0] == pytest.approx(3.5)  # (2 + 3 + 4 + 5) / 4: the 100 does not move it
    # Winsorised at 2 and 5 (mean 3.5), over 1 - 2 x 2 / 8.
    assert influence[0] == pytest.approx([-3, -3, -3, -1, 1, 3, 3, 3])


def test_the_sandwich_sums_influences_within_duets() -> None:
    influence = np.array([[-3.0, -3, -3, -1, 1, 3, 3, 3]])
    variance, duets = ab_limit.sandwich(influence, np.array([0, 0, 1, 1, 2, 2, 3, 3]))
    # Duet sums -6, -4, 4, 6: D / (D - 1) x 104 / 8^2.
    assert duets == 4 and variance[0] == pytest.approx(4 / 3 * 104 / 64)
    # A duet's offset moves its pairs together, and the variance with it: pairs of one duet
    # that agree count as one, not as two independent ones.
    apart, _ = ab_limit.sandwich(influence, np.array([0, 1, 2, 3, 0, 1, 2, 3]))
    assert apart[0] == pytest.approx(4 / 3 * (4 + 0 + 0 + 4) / 64)  # sums -2, 0, 0, 2


def test_huber_centres_a_symmetric_sample_and_resists_an_outlier() -> None:
    centre, influence = ab_limit.huber(np.array([[-2.0, -1, 0, 1, 2], [-2.0, -1, 0, 1, 50]]))
    assert centre[0] == pytest.approx(0.0, abs=1e-9)
    assert abs(centre[1]) < 1.0 and np.abs(influence[1]).max() < 5


def test_the_schedule_balances_orders_and_relays_later_duets_less_often() -> None:
    limit = ab_limit.Limit()
    looks = limit.looks()
    assert looks == sorted(set(looks)) and looks[0] == 40 and looks[-1] == 2432
    assert set(limit.same_looks) <= set(looks) and all(n % 8 == 0 for n in looks)
    assert int(limit.duet_numbers(512).max()) + 1 == 32  # a fresh duet every 16 pairs
    assert limit.relays(2432) == 32 + 32 - 4  # then every 64 (the last duets half a relay)


def test_same_and_the_directions_spend_their_alpha_apart() -> None:
    bounds = ab_limit.Limit().critical_z()
    assert bounds[184][0] is None and bounds[192][0] is not None  # no `same` before 192
    # The first `same` look spends 5% x (192 / 1024)^0.5 one-sided, alone.
    from scipy.stats import norm

    assert bounds[192][0] == pytest.approx(norm.isf(0.05 * (192 / 1024) ** 0.5), abs=1e-3)
    # The directions spend late: their last bound is below their first.
    assert bounds[2432][1] < bounds[40][1]


def test_plain_sessions_are_judged_plainly() -> None:
    limit = ab_limit.Limit()
    flat = np.zeros((1, limit.last))
    slow = np.full((1, limit.last), math.log(0.9))
    status, pairs = ab_limit.sequential(np.vstack([flat, slow]), limit)
    assert list(status) == ["same", "slower"] and list(pairs) == [192, 40]
    # So with the calibrated critical values.
    calibrated = ab_limit.Limit(critical=ab_limit.CALIBRATED)
    status, pairs = ab_limit.sequential(np.vstack([flat, slow]), calibrated)
    assert list(status) == ["same", "slower"] and list(pairs) == [192, 40]


def test_the_oracle_needs_the_pairs_its_normal_arithmetic_says() -> None:
    v = np.array([0.06 ** 2])
    gap = math.log(0.985) - math.log(0.97)
    need = ab_bound.fewest(v, -0.03, 0.015, 0.95)
    assert need == pytest.approx(v[0] * (2 * 1.645 / gap) ** 2, abs=2)
    # Two sessions: the shares average over them, so the noisier one sets the pairs.
    assert ab_bound.fewest(np.array([0.06 ** 2, 0.12 ** 2]), -0.03, 0.015, 0.95) > need


ab_limit_bounds = importlib.import_module("ab_limit_bounds")
ab_limit_replay = importlib.import_module("ab_limit_replay")


def test_a_bound_is_found_where_the_share_first_crossed_is_the_share_spent() -> None:
    # 1,000 sessions' pivots at two looks: -0.000 .. -0.999 at the first, the same reversed at
    # the second (so the sessions that cross late are others than those that crossed early).
    first = -np.arange(1000) / 1000
    t = np.stack([first, first[::-1]], axis=1)
    found = ab_limit_bounds.bounds_for(t, np.array([0.03, 0.05]), np.array([9.0, 9.0]))
    # 30 first crossed by the first look: between -T = 0.970 and 0.969; 20 more by the second.
    assert found[0] == pytest.approx(0.9695)
    assert np.count_nonzero(-t[:, 0] >= found[0]) == 30
    crossed = (-t[:, 0] >= found[0]) | (-t[:, 1] >= found[1])
    assert np.count_nonzero(crossed) == 50


def test_too_few_crossings_keep_the_spending_bound_and_a_missing_look_stays_missing() -> None:
    t = -np.arange(1000)[:, None] / 1000 * np.ones((1, 3))
    found = ab_limit_bounds.bounds_for(t, np.array([0.001, np.nan, 0.05]),
                                       np.array([7.0, 8.0, 9.0]))
    assert found[0] == 7.0 and np.isnan(found[1])  # 1 crossing of the 20 a bound needs
    assert found[2] == pytest.approx(0.9495)


def test_each_kind_spends_its_own_alpha_by_its_own_looks() -> None:
    limit = ab_limit.Limit()
    same, direction = ab_limit_bounds.spending_shares(limit)
    looks = limit.looks()
    assert np.isnan(same[looks.index(40)]) and same[looks.index(1024)] == pytest.approx(0.05)
    assert np.isnan(same[looks.index(2432)]) and direction[-1] == pytest.approx(0.05)
    assert same[looks.index(256)] == pytest.approx(0.05 * 0.5)


def test_a_calibrated_table_is_used_as_it_is_and_only_on_its_own_schedule() -> None:
    limit = ab_limit.Limit(critical=((128, 2.5, 9.0),))
    assert ab_limit.critical_t(limit, 128, 8) == (2.5, 9.0)
    with pytest.raises(ValueError, match="another schedule"):
        ab_limit.critical_t(limit, 160, 10)
    # Uncalibrated: the spending's z at 192 pairs as t on the 12 duets' 11 degrees of freedom.
    same, _ = ab_limit.critical_t(ab_limit.Limit(), 192, 12)
    from scipy.stats import norm, t

    assert same == pytest.approx(t.isf(norm.sf(ab_limit.Limit().critical_z()[192][0]), 11))
    assert ab_limit.critical_t(ab_limit.Limit(), 40, 4)[0] == math.inf  # no `same` at 40


def test_the_calibrated_table_covers_the_rule_s_looks() -> None:
    table = ab_limit.CALIBRATED
    limit = ab_limit.Limit(critical=table)
    assert [n for n, _, _ in table] == limit.looks()
    assert all(math.isfinite(s) == (n in limit.same_looks) for n, s, _ in table)


def test_at_the_floor_s_edge_every_decided_verdict_is_a_one_sided_miss() -> None:
    assert ab_limit_replay.right_and_wrong(-0.015, 0.015) == ("undecided",
                                                             ("same", "slower", "faster"))
    assert ab_limit_replay.right_and_wrong(-0.016, 0.015) == ("slower", ("same", "faster"))
    assert ab_limit_replay.right_and_wrong(0.014, 0.015) == ("same", ("faster",))


def test_the_rule_trims_the_share_it_names() -> None:
    y = np.array([[0.0, 1, 2, 3, 4, 5, 6, 100]])
    centre, _ = ab_limit.Limit(trim=0.375).estimate(y)  # 3 cut from each end of 8
    assert centre[0] == pytest.approx(3.5)
    centre, _ = ab_limit.Limit(trim=0.125).estimate(y)  # 1 cut: 1 .. 6
    assert centre[0] == pytest.approx(3.5)
    assert ab_limit.Limit(trim=0.0).estimate(y)[0][0] == pytest.approx(121 / 8)
