"""How an A/B comparison's cases are judged: the floor, the looks, the duets and their relay, and
the rule (tfperf.ab.verdict says what each rule does). The schedule of looks and duets is plain
arithmetic on these numbers, here; the statistics that use it are in tfperf.ab."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Final, Literal

import numpy as np

# How a case is judged (tfperf.ab.verdict's docstring): duets as units with Student's t on the
# duets' degrees of freedom at every look, the rule of every new session (no option chooses
# another); or, in sessions kept before, duets as units with the degrees of freedom chosen by
# the data, independent pairs with alpha spent by the pairs, or alpha / K at each
# of K looks. A kept file is judged again by the rule it names.
SessionRule = Literal["duets-t", "duets", "spending", "bonferroni"]
DUETS_T: Final = "duets-t"
DUETS: Final = "duets"
SPENDING: Final = "spending"
BONFERRONI: Final = "bonferroni"
SESSION_RULES = (DUETS_T, DUETS, SPENDING, BONFERRONI)
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


@dataclass(frozen=True)
class ABSettings:
    # The least change that counts, either way: see docs/ab.md for how the A/A runs set it.
    floor: float = 0.015
    # Two-sided: the intervals are 1 - alpha repeated intervals, so each one-sided wrong verdict
    # (`slower` where B is not slower by the floor, `same` where it is, `faster` alike) comes
    # in at most alpha / 2 of cases: 5%. (Older kept sessions ran at alpha 0.05 for any wrong
    # decided verdict, which the floor's margin mostly spent on nothing.)
    alpha: float = 0.10
    min_pairs: int = 16  # the first look (then looks(): 2 MIN, 4 MIN, then half doublings)
    # The last look. 256 rather than 128: a case that has not changed reaches it, and at 128
    # its interval was often still too wide to say `same` (docs/ab.md).
    max_pairs: int = 256
    # Pairs of side A and side B workers, all alive at once; pairs go round them. Each worker
    # process runs at its own speed, about 0.5% apart (docs/ab.md): more duets average more of
    # them out. Even, so that as many duets start A first as start B first.
    duets: int = 4
    # A duet's workers measure this many pairs, then end, and a fresh duet takes their place
    # (0: they measure the whole case). A per-process speed then weighs one duet in many
    # (docs/ab.md): 8 with 4 duets is 8 duets at 64 pairs, 32 at 256. 8 rather than 16 (issue
    # 33's): the interval's degrees of freedom are the duets', and twice the duets for a relay
    # every 8 pairs decided 2% slowdowns and A/A cases more often (benchmarks/ab_designs.py).
    relay: int = 8
    # Each side's turn in a pair runs whole rounds for about this long, and an A/B round is
    # this many steps unless --perf-steps-per-round says otherwise. Short: the closer in time a
    # pair's two turns, the more of the machine's drift they share. On the 2-core CPU one
    # 0.2 s round per turn gave a slightly narrower interval than one 0.5 s round, in half the
    # time; 1-2 s turns were wider still (docs/ab.md has the measurement).
    turn_s: float = 0.2
    steps_per_round: int = 2
    # A turn's yardstick burst (0.1 s: how fast the machine is for that side now, which rates
    # its rounds' MFU and flags a disturbed case) runs before every K-th pair of a duet, its
    # first always; the pairs between carry their side's last rate and keep none of their own.
    # 1: before every pair. The verdict does not use the bursts (adjust_yardstick is off), and
    # at a 0.2 s turn two of them are about a sixth of a pair.
    yardstick_every: int = 1

    # How a case is judged (SESSION_RULES; a kept file's may be retired): see the module's
    # docstring.
    look_rule: LookRule = DUETS_T
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
        """MIN, 2 MIN, 4 MIN, then 6, 8, 12, 16 MIN ... (or 8, 16 MIN ... without half
        doubling), and MAX. Every look widens the intervals of the others, and a look narrows
        one as the square root of the pairs: the early looks, which few pairs make cheap and
        few duets make wide, double; the later ones grow by half a doubling, so that a case
        stops near the pairs it needs."""
        steps = [1, 2, 4]
        while steps[-1] * self.min_pairs < self.max_pairs:
            last = steps[-1]
            power_of_two = last & (last - 1) == 0
            steps.append(last * 2 if not self.half_doubling else
                         last * 3 // 2 if power_of_two else last * 4 // 3)
        looks = [s * self.min_pairs for s in steps if s * self.min_pairs < self.max_pairs]
        return [*looks, self.max_pairs]

    def relays(self, pairs: int) -> int:
        """The fresh duets that have taken over by the time `pairs` pairs are measured."""
        return max(0, int(self.duet_numbers(pairs).max(initial=0)) - self.duets)

    def look_index(self, pairs: int) -> int:
        """The last look `pairs` reach (the first, below it)."""
        return max(0, sum(look <= pairs for look in self.looks()) - 1)

    def duet_numbers(self, pairs: int) -> np.ndarray:
        """The duet of each of the first `pairs` pairs, as duet.py schedules them: pairs go
        round the slots, and a slot's duet is relayed by a fresh one every `relay` pairs."""
        index = np.arange(pairs)
        slot, served = index % self.duets, index // self.duets
        return slot + 1 + (self.duets * (served // self.relay) if self.relay else 0)

    @functools.cache  # noqa: B019 (frozen settings: a handful of instances per session)
    def designs(self) -> list[tuple[int, float]]:
        """Each look's duets, and the mean over them of 1 / their pairs."""
        found = []
        for look in self.looks():
            sizes = np.bincount(self.duet_numbers(look))[1:]
            sizes = sizes[sizes > 0]
            found.append((len(sizes), float(np.mean(1 / sizes))))
        return found
