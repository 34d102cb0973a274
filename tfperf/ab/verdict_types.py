"""What a case's A/B verdict says, and how it reads (verdict.py judges it)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from tfperf.ground.vocabulary import UNDECIDED, ABStatus

Status = ABStatus  # what a verdict can say


@dataclass(frozen=True)
class Verdict:
    status: Status
    ratio: float  # B over A: below 1, B is slower
    low: float
    high: float
    pairs: int
    confidence: float
    floor: float
    more_pairs: int | None = None  # undecided: about how many more pairs would decide it
    # Under the duet rules and `trimmed`: what the interval rests on.
    duets: int | None = None
    pair_sd: float | None = None  # a pair's own noise (log B/A; `trimmed`: 1.4826 MAD)
    duet_sd: float | None = None  # a duet's own offset, as estimated (log B/A; not `trimmed`)
    duet_share: float | None = None  # of the estimate's variance, the duets' offsets
    second_turn: float | None = None  # a side's speed in the second turn over the first
    yardstick_share: float | None = None  # of the pairs' variance the yardstick explains
    more_duets: int | None = None  # undecided: the fresh duets those pairs are

    @property
    def decided(self) -> bool:
        return self.status != UNDECIDED

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def figures(self) -> str:
        return (f"B/A {self.ratio:.3f} [{self.low:.3f}, {self.high:.3f}] "
                f"({self.confidence:.1%} interval, {self.pairs} pairs; floor {self.floor:.1%})")

    def kept_open_by(self) -> str:
        """What makes the interval as wide as it is."""
        if self.duet_share is None or self.pair_sd is None:
            return "the pairs' spread"
        own = "" if self.duet_sd is None else f"SD {self.duet_sd:.1%} a duet "
        parts = [f"per-pair noise (SD {self.pair_sd:.1%} a pair, "
                 f"{1 - self.duet_share:.0%} of the variance)",
                 f"the duets' own speeds ({own}over {self.duets} duets, "
                 f"{self.duet_share:.0%})"]
        if self.second_turn is not None and abs(self.second_turn - 1) > 0.005:
            parts.append(f"a second-turn effect of {self.second_turn - 1:+.1%} (counterbalanced, "
                         f"so it moves no estimate)")
        return ", ".join(parts)

    def describe(self) -> str:
        said = self.figures()
        if self.status != UNDECIDED:
            return f"{self.status}: {said}"
        if not self.more_pairs:
            more = "more pairs than can be estimated (the ratio sits on the floor)"
        elif self.more_duets:
            more = f"about {self.more_pairs} more pairs ({self.more_duets} more duets)"
        else:
            more = f"about {self.more_pairs} more pairs"
        return f"undecided: {said}; kept open by {self.kept_open_by()}; it would need {more}"
