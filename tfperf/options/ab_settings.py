"""How an A/B comparison's cases are judged: the floor, the looks, the duets and their relay, and
the rule (tfperf.ab.verdict says what each rule does). The schedule of looks and duets is plain
arithmetic on these numbers, here; the statistics that use it are in tfperf.ab."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Final, Literal

import numpy as np

# How a case is judged (tfperf.ab.verdict's docstring): the pooled 25% trimmed mean with its
# variance from the duets and separate spending for `same` and for `slower`/`faster`, the rule
# of every new session (no option chooses another); or, in sessions kept before, duets as units
# with Student's t on the duets' degrees of freedom at every look or on those chosen by the
# data, independent pairs with alpha spent by the pairs, or alpha / K at each of K looks. A
# kept file is judged again by the rule it names.
SessionRule = Literal["trimmed", "duets-t", "duets", "spending", "bonferroni"]
TRIMMED: Final = "trimmed"
DUETS_T: Final = "duets-t"
DUETS: Final = "duets"
SPENDING: Final = "spending"
BONFERRONI: Final = "bonferroni"
SESSION_RULES = (TRIMMED, DUETS_T, DUETS, SPENDING, BONFERRONI)
# Retired research rules: candidates a study judged and rejected, that no session runs under
# (benchmarks/ab_designs.py defines and judges them, and says why each was rejected). Their
# research lives there; what stays here is only what judging a kept file that names one
# needs, so that tfperf-ab, which never imports the studies, judges it again as it was judged
# and says in one line that a retired research rule judged it (session_report.table).
# clusters-t: duets-t with Var(B/A) the duets' centres' own spread over D alone.
RetiredRule = Literal["clusters-t"]
CLUSTERS_T: Final = "clusters-t"
RETIRED_RULES = (CLUSTERS_T,)
LookRule = SessionRule | RetiredRule
LOOK_RULES = (*SESSION_RULES, *RETIRED_RULES)  # every rule a kept session file may name
DUET_RULES = (DUETS_T, CLUSTERS_T, DUETS)  # the rules that take each worker process as a unit
T_RULES = (DUETS_T, CLUSTERS_T)  # Student's t on the duets' D - 1 degrees of freedom


# `trimmed`'s `same` looks for a last look of REFERENCE_LAST pairs or more (an earlier last look
# scales them down): none before 192, where A/A cases start to decide (what looks at 128 and
# 160 would spend, 192 spends alone), to 1,024, by which nearly every unchanged case has
# (benchmarks/results/ab_limit.md). Where unchanged cases decide does not move with a later
# last look, so neither do they.
REFERENCE_LAST = 2048
SAME_LOOKS = (192, 224, 256, 288, 320, 384, 448, 512, 640, 768, 1024)


@dataclass(frozen=True)
class ABSettings:
    # The least change that counts, either way: see docs/ab.md for how the A/A runs set it.
    floor: float = 0.015
    # Two-sided: each one-sided wrong verdict (`slower` where B is not slower by the floor,
    # `same` where it is, `faster` alike) comes in at most alpha / 2 of cases: 5%.
    alpha: float = 0.10
    min_pairs: int = 32  # no look before it (at 2,432 pairs the first quarter doubling is 40)
    # The last look: 2,432 pairs, by which a 2% slowdown is caught in 95% of sessions; about 15
    # minutes for resnet20 tiny on a 2-core CPU at a 0.26 s pair (benchmarks/results/
    # ab_limit.md). A case that has not changed says `same` near 192 pairs.
    max_pairs: int = 2432
    # Pairs of side A and side B workers, all alive at once; pairs go round them. Each worker
    # process runs at its own speed (docs/design/ab.md): more duets average more of them out.
    # Even, so that as many duets start A first as start B first.
    duets: int = 4
    # A duet's workers measure this many pairs, then end, and a fresh duet takes their place
    # (0: they measure the whole case); after `relay_until` pairs, `late_relay` (0: `relay`).
    # A relay costs about 14 pairs' time at a one-step turn: 16 early, when few duets make the
    # interval wide, 64 late, when duets are many and the time saved pays for a look at 2,432
    # pairs within 15 minutes (benchmarks/results/ab_limit.md).
    relay: int = 16
    late_relay: int = 64
    relay_until: int = 512
    # Each side's turn in a pair runs whole rounds for about this long, and an A/B round is
    # this many steps unless --perf-steps-per-round says otherwise: one step, the shortest turn,
    # since turn length does not change a pair's noise and the shortest pair gives the least
    # variance a second (benchmarks/results/ab_pair_cost.md).
    turn_s: float = 0.1
    steps_per_round: int = 1
    # A turn's yardstick burst (0.1 s: how fast the machine is for that side now, which rates
    # its rounds' MFU and flags a disturbed case) runs before every K-th pair of a duet, its
    # first always; the pairs between carry their side's last rate and keep none of their own.
    # The verdict does not use the bursts: every 8th pair costs a sixteenth of what every
    # pair does, and the pairs' noise did not change (benchmarks/results/ab_pair_cost.md).
    yardstick_every: int = 8

    # How a case is judged (SESSION_RULES; a kept file's may be retired): see the module's
    # docstring.
    look_rule: LookRule = TRIMMED
    # `trimmed`: the share cut from each end; alpha spent on `same` as (n / its last look)^
    # same_power, on `slower` and `faster` as (1 - direction_linear) (n / MAX)^direction_power
    # + direction_linear n / MAX (spending.power_shares). The power, 5, spends late, where a
    # slowdown near the floor is decided (at 2,432 pairs 3 caught 2% in 94.0% of resnet20's
    # replayed sessions, 5 in 95.4%); the linear 1% spends enough early that a clear change is
    # still called on few pairs (10% by 80 pairs, as at a power of 3, not 152). An unchanged
    # case decides on `same`'s own alpha.
    trim: float = 0.25
    same_power: float = 0.5
    direction_power: float = 5.0
    direction_linear: float = 0.01
    # The least SD of a duet's own offset (log B/A) that the interval assumes, whatever a few
    # duets that happen to agree suggest: 0.5%, the least measured on the 2-core CPU. Chosen
    # by simulation (docs/ab.md): wrong verdicts stay near 1% at offsets of 0.3-1%.
    min_duet_sd: float = 0.005
    # The yardstick as a covariate (random_effects.py). Off: on real sessions it removed too
    # little of the pairs' variance to pay for itself (docs/ab.md); the share is reported.
    adjust_yardstick: bool = False
    # The least change in a side's costs (costs.py) that counts: compile time and time to the
    # first step, and peak device and host memory. Set from A/A sessions (docs/ab.md).
    time_cost_floor: float = 0.25
    memory_cost_floor: float = 0.10
    # Whether each case also trains both sides from the same weights on the same batches and
    # compares their numbers (tfperf.ab.numerics_check).
    numerics: bool = True

    # Alpha spent by information fraction t: alpha t^power (the power family). 2 rather than
    # 1 (the `duets` rule's): the first looks' intervals are wide on their duets' few degrees of
    # freedom whatever they spend, so spending less there leaves more for the later looks,
    # where an unchanged case is decided (benchmarks/ab_designs.py, docs/ab.md).
    spending_power: float = 2.0
    # Looks at MIN, 2 MIN, 4 MIN, then every half doubling (6, 8, 12, 16 MIN...), rather than
    # at every doubling (sessions kept under `duets` and older rules): an unchanged case stops
    # at 96 pairs where it would run to 128 (benchmarks/ab_designs.py).
    half_doubling: bool = True

    def looks(self) -> list[int]:
        """Where the pairs are judged. `trimmed`: a look every quarter doubling down from MAX,
        each a whole round of the duets, and the `same` looks. The duet rules: MIN, 2 MIN,
        4 MIN, then 6, 8, 12, 16 MIN ... (or 8, 16 MIN ... without half doubling), and MAX:
        every look widens the intervals of the others, and a look narrows one as the square
        root of the pairs."""
        if self.look_rule == TRIMMED:
            return sorted(set(self.direction_looks()) | set(self.same_looks()))
        steps = [1, 2, 4]
        while steps[-1] * self.min_pairs < self.max_pairs:
            last = steps[-1]
            power_of_two = last & (last - 1) == 0
            steps.append(last * 2 if not self.half_doubling else
                         last * 3 // 2 if power_of_two else last * 4 // 3)
        looks = [s * self.min_pairs for s in steps if s * self.min_pairs < self.max_pairs]
        return [*looks, self.max_pairs]

    def _whole_rounds(self, looks: list[float]) -> list[int]:
        """Looks at whole rounds of the duets (two pairs each: both orders) from MIN to MAX; MIN
        where none is left."""
        step = 2 * self.duets
        found = {step * round(n / step) for n in looks}
        return sorted(n for n in found if self.min_pairs <= n <= self.max_pairs) or \
            [self.min_pairs]

    def direction_looks(self) -> list[int]:
        """`trimmed`'s looks that may say `slower` or `faster`: MAX / 2^(k / 4), from MAX down to
        MIN."""
        looks, k = [], 0
        while self.max_pairs * 2 ** (-k / 4) >= self.min_pairs - 1e-9:
            looks.append(self.max_pairs * 2 ** (-k / 4))
            k += 1
        return sorted({*self._whole_rounds(looks), self.max_pairs})

    def same_looks(self) -> list[int]:
        """`trimmed`'s looks that may say `same`: SAME_LOOKS, scaled down to a MAX below
        REFERENCE_LAST."""
        scale = min(1.0, self.max_pairs / REFERENCE_LAST)
        return self._whole_rounds([n * scale for n in SAME_LOOKS])

    def relays(self, pairs: int) -> int:
        """The fresh duets that have taken over by the time `pairs` pairs are measured."""
        return max(0, int(self.duet_numbers(pairs).max(initial=0)) - self.duets)

    def look_index(self, pairs: int) -> int:
        """The last look `pairs` reach (the first, below it)."""
        return max(0, sum(look <= pairs for look in self.looks()) - 1)

    def _served(self, pairs: int | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each of the first `pairs` pairs (or each pair index given), the ordinal of its
        duet in its slot and its place among that duet's pairs."""
        index = np.arange(pairs) if isinstance(pairs, int) else pairs
        served = index // self.duets  # the pairs its slot served before it
        if not self.relay:
            return np.zeros_like(served), served
        if not self.late_relay:
            return served // self.relay, served % self.relay
        late = self.late_relay
        early = -(-self.relay_until // self.duets)  # the slot's pairs before the late relay
        early_duets = -(-early // self.relay)
        ordinal = np.where(served < early, served // self.relay,
                           early_duets + (served - early) // late)
        place = np.where(served < early, served % self.relay, (served - early) % late)
        return ordinal, place

    def duet_numbers(self, pairs: int) -> np.ndarray:
        """The duet of each of the first `pairs` pairs, as duet.py schedules them: pairs go
        round the slots, and a slot's duet is relayed by a fresh one every `relay` pairs
        (every `late_relay` after `relay_until`)."""
        ordinal, _ = self._served(pairs)
        found: np.ndarray = np.arange(pairs) % self.duets + 1 + self.duets * ordinal
        return found

    def places(self, pairs: int) -> np.ndarray:
        """Each pair's place among its duet's pairs, from 0."""
        return self._served(pairs)[1]

    def relay_due(self, index: int) -> bool:
        """Whether the pair at `index` (from 0) is the first of a fresh duet in its slot."""
        # That pair alone: duet.py asks before every pair.
        return index >= self.duets and bool(self._served(np.array([index]))[1][0] == 0)

    @functools.cache  # noqa: B019 (frozen settings: a handful of instances per session)
    def designs(self) -> list[tuple[int, float]]:
        """Each look's duets, and the mean over them of 1 / their pairs."""
        found = []
        for look in self.looks():
            sizes = np.bincount(self.duet_numbers(look))[1:]
            sizes = sizes[sizes > 0]
            found.append((len(sizes), float(np.mean(1 / sizes))))
        return found
