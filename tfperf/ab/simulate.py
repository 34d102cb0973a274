"""Simulated A/B cases, judged by the verdict code itself: how often is it wrong?

A session's pairs are drawn as the model in random_effects.py says they behave, on the duet
schedule and turn orders of duet.py: log B/A = log(true ratio) + the duet's own offset (normal,
`duet_sd`) + what the second turn does (`second_turn`, to whichever side ran second) + the
pair's own noise (`pair_sd`, normal or Student's t with 5 degrees of freedom). The verdict
replays the session's stopping rule (verdict.sequential). The self-tests hold the shipped
defaults to their error targets with it, and benchmarks/ab_verdict_sim.py compares rules.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

from tfperf.ab import verdict
from tfperf.ab.random_effects import Pairs
from tfperf.ab.verdict import Verdict
from tfperf.options.ab_settings import ABSettings


@dataclass(frozen=True)
class Conditions:
    ratio: float  # the true B/A
    pair_sd: float  # a pair's own noise, log B/A
    duet_sd: float  # a duet's own offset, log B/A
    second_turn: float = 0.0  # log: what running second adds to a side's speed
    heavy_tails: bool = False  # pairs' noise Student's t (5 df) instead of normal


def orders(settings: ABSettings, seed: int) -> np.ndarray:
    """+1 where B's turn ran second, as duet.py draws them: each duet's pairs in blocks of
    AB and BA, which first at random."""
    duets = settings.duet_numbers(settings.max_pairs)
    # A pair's place among its duet's: pairs go round the slots, and a relay starts anew.
    rank = settings.places(settings.max_pairs)
    first = np.random.default_rng(seed).choice([1.0, -1.0], size=(duets.max() + 1,
                                                                  rank.max() // 2 + 1))
    b_second: np.ndarray = first[duets, rank // 2] * np.where(rank % 2 == 0, 1.0, -1.0)
    return b_second


def session(conditions: Conditions, settings: ABSettings, draw: np.random.Generator) -> Pairs:
    """One case's pairs, up to the settings' last look."""
    duets = settings.duet_numbers(settings.max_pairs)
    n = len(duets)
    offsets = draw.normal(0.0, conditions.duet_sd, duets.max() + 1)
    # Unit variance either way.
    noise = draw.standard_t(5, n) * math.sqrt(3 / 5) if conditions.heavy_tails \
        else draw.standard_normal(n)
    b_second = orders(settings, int(draw.integers(2**32)))
    log_ratios = (math.log(conditions.ratio) + offsets[duets] + conditions.second_turn * b_second
                  + conditions.pair_sd * noise)
    return Pairs(log_ratios, duets, b_second)


def many(conditions: Conditions, settings: ABSettings, sessions: int, draw: np.random.Generator
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`sessions` sessions drawn one after another as session() draws them: their log ratios
    and orders (a row each), and the duets they share."""
    drawn = [session(conditions, settings, draw) for _ in range(sessions)]
    return (np.stack([p.log_ratios for p in drawn]), drawn[0].duets,
            np.stack([p.b_second for p in drawn]))


def statuses(conditions: Conditions, settings: ABSettings, sessions: int, seed: int
             ) -> np.ndarray:
    """Each session's final verdict, as verdicts() finds it: the sessions still undecided at a
    look are judged at the next, all at once (verdict.judge_many)."""
    log_ratios, duets, b_second = many(conditions, settings, sessions, np.random.default_rng(seed))
    found = np.full(sessions, verdict.UNDECIDED, dtype=object)
    open_ = np.ones(sessions, dtype=bool)
    for look in settings.looks():
        judged = verdict.judge_many(log_ratios[open_, :look], duets[:look],
                                    b_second[open_, :look], settings)
        found[open_] = judged.status
        open_[open_] = judged.status == verdict.UNDECIDED
        if not open_.any():
            break
    return found


def every_look_held(conditions: Conditions, settings: ABSettings, sessions: int, seed: int
                    ) -> np.ndarray:
    """Whether each session's intervals at every look (all judged, none stopped) held the true
    ratio."""
    log_ratios, duets, b_second = many(conditions, settings, sessions, np.random.default_rng(seed))
    held = np.ones(sessions, dtype=bool)
    for look in settings.looks():
        judged = verdict.judge_many(log_ratios[:, :look], duets[:look], b_second[:, :look],
                                    settings)
        held &= (judged.low <= conditions.ratio) & (conditions.ratio <= judged.high)
    return held


def verdicts(conditions: Conditions, settings: ABSettings, sessions: int, seed: int
             ) -> list[Verdict]:
    """Each session's final verdict."""
    draw = np.random.default_rng(seed)
    return [verdict.sequential(session(conditions, settings, draw), settings)[-1]
            for _ in range(sessions)]


def counts(found: list[Verdict] | np.ndarray) -> Counter[str]:
    return Counter(str(v) if isinstance(v, str) else v.status for v in found)
