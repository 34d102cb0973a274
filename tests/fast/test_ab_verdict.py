"""The A/B verdict's statistics under the rules kept files name, on simulated pairs judged by the
verdict code itself (seeded: the same sessions every run, so no flakiness): the signed-rank
interval is exact, the looks spend alpha as promised, and under duets-t, as sessions ran it, a
decided verdict is wrong in at most 5% of sessions wherever per-pair noise and each process's
own speed put it. The trimmed rule, every new session's: test_ab_trimmed.py."""

from __future__ import annotations

import gzip
import itertools
import json
import math
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binomtest, norm

from tests.helpers.refused_imports import Refused
from tfperf.ab import (
    costs,
    method_text,
    random_effects,
    session_report,
    signed_rank,
    simulate,
    spending,
    verdict,
)
from tfperf.ab.session_file import SCHEMA
from tfperf.ab.simulate import Conditions
from tfperf.options import ab as ab_options
from tfperf.options import ab_settings
from tfperf.options.ab_settings import ABSettings
from tfperf.storage import schemas

# The duets-t rule as sessions ran it until the trimmed rule (kept files name it and are judged
# again by it): its looks, duets and relay.
DEFAULTS = ABSettings(look_rule="duets-t", min_pairs=16, max_pairs=256, relay=8, late_relay=0)
TODAY = replace(DEFAULTS, look_rule="spending", alpha=0.05, relay=16, spending_power=1,
                half_doubling=False)  # pairs as independent, as `spending` judges them


def _all_signs(n: int) -> np.ndarray:
    """Every sign pattern of n distinct magnitudes: the null distribution, enumerated."""
    magnitudes = np.arange(1, n + 1) + np.linspace(0, 0.3, n)
    return np.array(list(itertools.product((-1.0, 1.0), repeat=n))) * magnitudes


@pytest.mark.parametrize("n", [8, 12, 16])
@pytest.mark.parametrize("confidence", [0.95, 0.99])
def test_the_signed_rank_interval_is_exact_by_enumeration(n: int, confidence: float) -> None:
    """Under the null every sign pattern is equally likely: the share of patterns whose
    interval holds the centre is the exact coverage. It reaches the confidence, and one
    Walsh average fewer excluded on each side would be the narrowest that does not."""
    x = _all_signs(n)
    i, j = np.triu_indices(n)
    walsh = np.sort((x[:, i] + x[:, j]) / 2, axis=1)
    k = signed_rank.excluded(n, confidence)
    held = float(np.mean((walsh[:, k] <= 0) & (walsh[:, -1 - k] >= 0)))
    assert held >= confidence and math.isclose(held, signed_rank.coverage(n, confidence))
    narrower = float(np.mean((walsh[:, k + 1] <= 0) & (walsh[:, -2 - k] >= 0)))
    assert narrower < confidence, (n, confidence, held, narrower)
    low, high = signed_rank.hodges_lehmann(list(x[3]), confidence)[1:]
    assert (low, high) == (walsh[3, k], walsh[3, -1 - k])


@pytest.mark.parametrize("fractions", [(1 / 16, 1 / 8, 1 / 4, 1 / 2, 1.0),
                                       (0.2, 0.3, 0.45, 0.7, 1.0)])
def test_the_looks_are_crossed_as_alpha_is_spent(fractions: tuple[float, ...]) -> None:
    """With no change, a Brownian motion seen at the looks' information fractions has crossed
    their bounds by look k with probability alpha t_k, whether the information grows as the
    pairs (first) or slower, as when the same duets go on (second)."""
    z = spending.bounds(fractions, 0.05)
    t = np.asarray(fractions)
    steps = np.random.default_rng(5).standard_normal((200_000, len(t))) * np.sqrt(np.diff(t, prepend=0))
    walks = np.cumsum(steps, axis=1) / np.sqrt(t)
    crossed = np.zeros(len(walks), dtype=bool)
    for k in range(len(t)):
        crossed |= np.abs(walks[:, k]) >= z[k]
        # 200,000 walks: the rate's sampling SD is at most 0.0005.
        assert abs(crossed.mean() - 0.05 * t[k]) < 0.002, (k, crossed.mean())
    # Four equal looks: the tabled bounds of this spending function.
    assert np.allclose(spending.bounds((0.25, 0.5, 0.75, 1.0), 0.05),
                       (2.4977, 2.4072, 2.3208, 2.2448), atol=2e-4)


def test_judging_imports_no_scipy_stats(monkeypatch: pytest.MonkeyPatch) -> None:
    """scipy.stats adds 0.4 CPU-s to every process that imports it, and each A/B session and
    command that judges would: the bounds, confidences and cost intervals use the functions of
    scipy.special that scipy.stats' normal and t call (their values: the tests above)."""
    for name in [m for m in sys.modules if m == "scipy.stats" or m.startswith("scipy.stats.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.delattr(sys.modules["scipy"], "stats", raising=False)
    monkeypatch.setattr(sys, "meta_path",
                        [Refused(["scipy.stats"], "judging imported {name}"), *sys.meta_path])
    assert len(spending.bounds.__wrapped__((0.3, 0.6, 1.0), 0.05, (0.09, 0.36, 1.0))) == 3
    for rule in ("bonferroni", "spending"):
        assert all(0.9 < c < 1 for c in verdict.confidences(ABSettings(look_rule=rule)))
    empty = {c.key: None for c in costs.COSTS}
    duets = [{"duet": n, "A": {**empty, "compile_cpu_s": 1.0}, "B": {**empty, "compile_cpu_s": b}}
             for n, b in enumerate((1.5, 1.6, 1.4, 1.55), 1)]
    assert costs.judge(duets, costs.COSTS[0], ABSettings()).status == costs.HIGHER


def test_a_share_on_a_half_per_cent_rounds_the_same_a_hair_either_side() -> None:
    """A look's information share often sits on a half per cent by construction (12.5%): how
    the floating point falls differs by CPU and array shape, and the bounds must not."""
    last = 8.0
    below, above = np.nextafter(1.0, 0.0), np.nextafter(1.0, 2.0)
    rows = np.array([[below, 4.0, last], [1.0, 4.0, last], [above, 4.0, last]])
    assert 100 * below / last < 12.5 < 100 * above / last  # the hair is there to round by
    found = spending.fractions_of_rows(rows)
    assert (found == found[1]).all()
    assert spending.fractions([above, 4.0, last]) == spending.fractions([below, 4.0, last])


def test_the_looks_double_then_grow_by_half_doublings_and_relays_are_counted() -> None:
    assert DEFAULTS.looks() == [16, 32, 64, 96, 128, 192, 256]
    assert replace(DEFAULTS, half_doubling=False).looks() == [16, 32, 64, 128, 256]
    assert replace(DEFAULTS, min_pairs=6, max_pairs=100).looks() == [6, 12, 24, 36, 48, 72,
                                                                      96, 100]
    assert replace(DEFAULTS, min_pairs=16, max_pairs=16).looks() == [16]
    # 4 slots, a fresh duet every 8 pairs of a slot: 32 duets at 256 pairs, 28 of them fresh;
    # 100 pairs are 25 a slot, so 4 duets a slot.
    assert [DEFAULTS.relays(n) for n in (0, 3, 32, 33, 256)] == [0, 0, 0, 1, 28]
    assert replace(DEFAULTS, relay=16).relays(100) == 4
    assert replace(DEFAULTS, relay=0).relays(256) == 0


def test_duets_centres_are_each_duet_s_hodges_lehmann_estimate() -> None:
    draw = np.random.default_rng(5)
    values, duets = draw.normal(size=40), draw.integers(3, 9, size=40)  # duets of several sizes
    _, index, sizes = np.unique(duets, return_inverse=True, return_counts=True)
    assert np.array_equal(signed_rank.centres(values, index, sizes), [
        signed_rank.centre(values[duets == d]) for d in np.unique(duets)])


def test_the_report_names_the_rule() -> None:
    assert method_text.looks_rule(TODAY) == (
        "pairs taken as independent: Hodges-Lehmann with the Wilcoxon signed-rank interval, "
        "99.7% at 16, 99.6% at 32, 99.3% at 64, 98.5% at 128, 96.8% at 256 pairs "
        "(5% over all looks: alpha spent in proportion to the pairs)")
    assert method_text.looks_rule(DEFAULTS).startswith("each worker process a unit: duets' ")


# The grid: per-pair SD 1.5% to 10%, each duet's own offset 0.3% to 1% (SD, log B/A);
# heavy-tailed pair noise; a second turn that runs 1% faster.
GRID = [Conditions(1.0, 0.015, 0.003), Conditions(1.0, 0.015, 0.01),
        Conditions(1.0, 0.02, 0.0055), Conditions(1.0, 0.02, 0.009),
        Conditions(1.0, 0.05, 0.01), Conditions(1.0, 0.10, 0.01),
        Conditions(1.0, 0.02, 0.009, heavy_tails=True),
        Conditions(1.0, 0.02, 0.009, second_turn=0.01)]
SESSIONS = 300


def _wrong(settings: ABSettings, conditions: Conditions, seed: int) -> dict[str, int]:
    """Wrong decided verdicts: slower or faster at half the floor; same at 1.2 floors."""
    floor = settings.floor
    near = simulate.counts(simulate.statuses(replace(conditions, ratio=1 - floor / 2),
                                             settings, SESSIONS, seed))
    beyond = simulate.counts(simulate.statuses(replace(conditions, ratio=1 - 1.2 * floor),
                                               settings, SESSIONS, seed + 1))
    return {"slower or faster at half the floor": near["slower"] + near["faster"],
            "same at 1.2 floors": beyond["same"]}


def _upper(count: int) -> float:
    return float(binomtest(count, SESSIONS).proportion_ci(0.95, "exact").high)


@pytest.mark.parametrize("conditions", GRID, ids=lambda c: (
    f"pair{c.pair_sd:.1%}-duet{c.duet_sd:.2%}{'-heavy' if c.heavy_tails else ''}"
    f"{'-second_turn' if c.second_turn else ''}"))
def test_a_decided_verdict_is_wrong_in_at_most_5_percent(conditions: Conditions) -> None:
    """At the shipped defaults: the 95% binomial upper bound of each wrong rate, over 300
    sessions, at most 5%."""
    for what, count in _wrong(DEFAULTS, conditions, seed=17).items():
        assert _upper(count) <= 0.05, (
            f"{what}: {count} of {SESSIONS}, upper bound {_upper(count):.1%}")


def test_pairs_judged_as_independent_are_wrong_too_often_where_processes_differ() -> None:
    """The grid's quiet, offset-heavy corner, judged as `spending` does: the test above would
    fail (the pairs' interval misses each duet's offset)."""
    wrong = _wrong(TODAY, GRID[1], seed=17)
    assert _upper(wrong["same at 1.2 floors"]) > 0.05, wrong


def test_an_undecided_verdict_says_what_kept_it_open() -> None:
    draw = np.random.default_rng(2)
    pairs = simulate.session(Conditions(0.985, 0.06, 0.008), DEFAULTS, draw)
    found = verdict.judge(pairs, DEFAULTS)
    assert found.status == "undecided", found
    said = found.describe()
    assert "kept open by per-pair noise (SD" in said and "the duets' own speeds (SD" in said
    assert found.more_duets and f"({found.more_duets} more duets)" in said


def test_the_second_turn_effect_is_estimated_and_cancelled() -> None:
    """A side that runs 3% faster in its second turn: counterbalanced, it moves no estimate,
    and the model finds it."""
    draw = np.random.default_rng(4)
    found = [verdict.judge(simulate.session(Conditions(1.0, 0.02, 0.005, second_turn=0.03),
                                            DEFAULTS, draw), DEFAULTS) for _ in range(40)]
    assert abs(np.median([v.ratio for v in found]) - 1) < 0.003
    assert 1.025 < float(np.median([v.second_turn or 0 for v in found])) < 1.035


def test_the_order_is_counterbalanced_within_each_duet_and_drawn_per_session() -> None:
    from tfperf.ab import duet

    def orders(seed: int, number: int) -> list[str]:
        return ["".join(o) for o in itertools.islice(duet.turn_orders(seed, "case", number), 16)]

    first = orders(1, 1)
    assert first.count("AB") == first.count("BA") == 8
    assert all({first[i], first[i + 1]} == {"AB", "BA"} for i in range(0, 16, 2))
    assert any(orders(seed, 1) != first for seed in range(2, 6))  # not one sequence forever
    assert orders(1, 1) == first  # the kept seed replays it


def test_a_decision_is_as_quick_as_the_noise_allows() -> None:
    """Not only safe: at measured noise (per-pair 3.5%, duets 0.6%), 5% is decided by 64
    pairs, and an A/A case says `same`, in most sessions."""
    fast = simulate.verdicts(Conditions(0.95, 0.035, 0.006), DEFAULTS, 100, seed=8)
    assert np.median([v.pairs for v in fast]) <= 64 and all(v.status == "slower" for v in fast)
    same = simulate.counts(simulate.verdicts(Conditions(1.0, 0.035, 0.006), DEFAULTS, 100, 9))
    assert same["same"] >= 90, same


def test_the_bounds_take_the_spreads_seen_so_far() -> None:
    """Under duets, a look's information is 1 / Var of its design: with offsets large
    against the pairs' noise, the first looks already hold much of the last's, and spend
    more; with none, it grows as the pairs."""
    draw = np.random.default_rng(1)
    offsets = random_effects.fit(
        simulate.session(Conditions(1.0, 0.01, 0.01), DEFAULTS, draw), 0.005, False)
    noise = random_effects.fit(
        simulate.session(Conditions(1.0, 0.08, 0.0), DEFAULTS, draw), 0.005, False)
    z_offsets, z_noise = verdict.bounds(DEFAULTS, offsets), verdict.bounds(DEFAULTS, noise)
    assert z_offsets[0] < z_noise[0] - 0.2
    assert float(norm.sf(z_noise[0])) * 2 < 0.05 * 2 / 16


@pytest.mark.parametrize("rule", ["trimmed", "duets-t", "clusters-t", "duets", "spending"])
def test_many_sessions_judged_at_once_get_each_session_s_own_verdict(rule: str) -> None:
    """judge_many (the simulations' path) gives each session what judge gives it alone, at
    every look: its fit, its own bounds among sessions whose spreads differ, its status."""
    settings = replace(DEFAULTS, look_rule=rule)  # type: ignore[arg-type]
    draw = np.random.default_rng(5)
    # Sessions from quiet to noisy, so that their looks' information fractions differ.
    drawn = [simulate.session(Conditions(0.985, sd, duet_sd), settings, draw)
             for sd, duet_sd in [(0.005, 0.02), (0.01, 0.005), (0.03, 0.0), (0.06, 0.01)] * 3]
    for look in settings.looks():
        alone = [verdict.judge(p.head(look), settings) for p in drawn]
        many = verdict.judge_many(np.stack([p.log_ratios[:look] for p in drawn]),
                                  drawn[0].duets[:look],
                                  np.stack([p.b_second[:look] for p in drawn]), settings)
        assert list(many.status) == [v.status for v in alone]
        for field in ("ratio", "low", "high"):
            assert getattr(many, field) == pytest.approx([getattr(v, field) for v in alone],
                                                         rel=1e-12)


def test_clusters_t_takes_the_duets_centres_own_spread_alone() -> None:
    """The candidate rule: the same looks, bounds and t as duets-t, with Var(B/A) the duets'
    centres' own spread over D instead of never less than the model's; heavy-tailed pairs,
    whose Hodges-Lehmann centres spread less than the model's (pi / 3) sigma_e^2 / m says."""
    shipped = DEFAULTS
    candidate = replace(DEFAULTS, look_rule="clusters-t")
    draw = np.random.default_rng(11)
    pairs = simulate.session(Conditions(1.0, 0.08, 0.0, heavy_tails=True), shipped, draw)
    head = pairs.head(128)
    wide, narrow = verdict.judge(head, shipped), verdict.judge(head, candidate)
    fit = random_effects.fit(head, shipped.min_duet_sd, False)
    _, index, sizes = np.unique(head.duets, return_inverse=True, return_counts=True)
    centres = signed_rank.centres(head.log_ratios - fit.order_effect * head.b_second, index,
                                  sizes)
    half = math.log(narrow.high / narrow.low) / 2
    assert half / (math.log(wide.high / wide.low) / 2) == pytest.approx(
        math.sqrt(np.var(centres, ddof=1) / len(centres)) / fit.se, rel=1e-9)
    assert half < math.log(wide.high / wide.low) / 2
    assert narrow.ratio == wide.ratio


def test_a_kept_file_that_names_a_retired_rule_is_judged_again_by_it_and_says_so() -> None:
    """A retired research rule is not a session's (no option gives a session one), but a kept
    file that names it passes the schema and is judged again by it, to the verdicts it had:
    here a real kept session (TensorFlow 2.22.0rc0 against 2.21.0) relabelled clusters-t,
    whose interval is the duets' centres' spread alone, narrower than duets-t's."""
    path = (Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "rc_2.22.0rc0" /
            "Linux-py3.11-tf2.21.0-Intel_R_Xeon_R_Processor-amx-2cpu.held.json.gz")
    data = json.loads(gzip.decompress(path.read_bytes()))
    data["settings"]["look_rule"] = "clusters-t"
    schemas.validate(data, SCHEMA, path, "tfperf A/B session file")
    settings = session_report.settings_of(data)
    (case,) = data["cases"]
    found = session_report.final(case, settings)
    assert found is not None and (found.status, found.pairs) == ("undecided", 32)
    assert (found.ratio, found.low, found.high) == pytest.approx(
        (1.003198631069239, 0.9804699445008533, 1.0264542008899071), rel=1e-12)
    shipped = session_report.final(case, replace(settings, look_rule="duets-t"))
    assert shipped is not None and (shipped.low, shipped.high) == pytest.approx(
        (0.974590491433742, 1.032646534339409), rel=1e-12)
    lines = session_report.table(data, settings)
    assert [line for line in lines if "retired" in line] == [
        "judged by clusters-t, as the file names: a retired research rule, which no session "
        "runs under (benchmarks/ab_designs.py)"]
    assert not any("retired" in line for line in session_report.table(
        data, replace(settings, look_rule="duets-t")))


def test_no_new_session_is_judged_by_a_retired_rule() -> None:
    """A session's settings are the defaults' rule, trimmed: no --perf-ab option names a rule."""
    assert not set(ab_settings.RETIRED_RULES) & set(ab_settings.SESSION_RULES)
    assert set(ab_settings.LOOK_RULES) == {*ab_settings.SESSION_RULES, *ab_settings.RETIRED_RULES}
    assert ABSettings().look_rule == ab_settings.TRIMMED
    named: list[str] = []

    class Group:
        def addoption(self, name: str, **options: object) -> None:
            named.append(name)

    ab_options.add(Group())
    assert "--perf-ab-floor" in named and not [n for n in named if "rule" in n]
