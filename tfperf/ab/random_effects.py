"""B/A of one case with the worker process as a unit: a one-way random-effects model.

Each pair's log B/A is y = mu + u_duet + gamma s + e. `u_duet` is the duet's own offset: each
worker process runs at a speed of its own for its whole life (docs/ab.md measured 0.5-0.9% SD
per duet), so the pairs of one duet share it and more pairs of the same duet never average it
out. `s` is +1 where B's turn ran second in its pair and -1 where it ran first, and gamma what
running second does (counterbalanced within each duet, so it cancels in mu; estimated, so it
leaves the noise). `e` is the pair's own noise, symmetric about 0.

- Each duet's centre is the Hodges-Lehmann estimate of its pairs (a pair hit by a neighbour's
  burst barely moves it), mu the mean of the duets' centres: every duet weighs the same.
- Var(mu) = sigma_d^2 / D + (pi / 3) sigma_e^2 mean(1 / m_d) / D for D duets of m_d pairs:
  pi / 3 is the Hodges-Lehmann estimate's variance over the mean's under normal noise (under
  heavier tails it is less, so the interval errs wide). sigma_e^2 comes from the pairs' spread
  within duets (many degrees of freedom); sigma_d^2 from the duets' centres' spread beyond it
  (an analysis of variance, few degrees of freedom), and never below `min_duet_sd`: a few duets
  that happen to agree must not make the interval pretend processes are alike. Which design and
  floor were chosen, and what the others did, is in docs/ab.md (benchmarks/ab_verdict_sim.py).
- The yardstick: each pair's two turns' bursts say how fast the machine was for each side.
  Their log ratio x can take part as a covariate (CUPED: y - theta (x - mean x), theta fitted
  within duets, not fixed at 1); the share of the within-duet variance it explains is
  reported either way.

Pure functions of the pairs: no files, no processes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from tfperf.ab import signed_rank

# The Hodges-Lehmann estimate's variance over the mean's, under normal noise.
HL_VARIANCE = math.pi / 3


@dataclass(frozen=True)
class Pairs:
    """A case's pairs as the verdict sees them, in the order they ran."""

    log_ratios: np.ndarray  # log(B/A) per pair
    duets: np.ndarray  # the duet each pair ran on
    b_second: np.ndarray  # +1 where B's turn ran second (order "AB"), -1 where first
    yardstick: np.ndarray | None = None  # log(B's yardstick / A's), where every pair has both

    @classmethod
    def of(cls, ratios: Sequence[float], duets: Sequence[int], orders: Sequence[str],
           yardsticks: Sequence[tuple[float | None, float | None]] | None = None) -> Pairs:
        x = None
        if yardsticks and all(a and b for a, b in yardsticks):
            x = np.log([b / a for a, b in yardsticks])  # type: ignore[operator]
        return cls(np.log(np.asarray(ratios, dtype=float)), np.asarray(duets),
                   np.where(np.asarray(orders) == "AB", 1.0, -1.0), x)

    def head(self, n: int) -> Pairs:
        return Pairs(self.log_ratios[:n], self.duets[:n], self.b_second[:n],
                     None if self.yardstick is None else self.yardstick[:n])

    def __len__(self) -> int:
        return len(self.log_ratios)


Spread = TypeVar("Spread", float, np.ndarray)  # one session's, or one a session


def _variance(duet_sd_used: Spread, within_sd: Spread, duets: int, mean_inverse_size: float
              ) -> Spread:
    """Var(mu): the duets' offsets (at least the floor) and the pairs' own noise, over D duets."""
    return (duet_sd_used ** 2 + HL_VARIANCE * within_sd ** 2 * mean_inverse_size) / duets


def _effective_df(duet_sd: Spread, duet_sd_used: Spread, within_sd: Spread, duets: int,
                  mean_inverse_size: float, df: Spread | int) -> np.ndarray:
    """Degrees of freedom of Var(mu)'s estimate. Where the duets' offsets are estimated above
    the floor, Var(mu) is the duets' centres' own spread over D, exactly: D - 1 of them. Where
    the floor holds, its part is fixed and only the pairs' noise is estimated
    (Welch-Satterthwaite, from `df`)."""
    within = HL_VARIANCE * np.asarray(within_sd) ** 2 * mean_inverse_size / duets
    whole = _variance(np.asarray(duet_sd_used), np.asarray(within_sd), duets, mean_inverse_size)
    with np.errstate(divide="ignore", invalid="ignore"):
        pooled = np.where(within > 0, whole ** 2 / (within ** 2 / np.asarray(df)), np.inf)
    estimated = (np.asarray(duet_sd) > np.asarray(duet_sd_used) - 1e-15) & (duets > 1)
    found: np.ndarray = np.where(estimated, float(duets - 1), pooled)
    return found


@dataclass(frozen=True)
class Fit:
    centre: float  # log B/A
    within_sd: float  # a pair's own noise, within its duet (after order and yardstick)
    duet_sd: float  # a duet's own offset: the analysis of variance's estimate, at least 0
    duet_sd_used: float  # what the interval assumes: at least the floor for it
    order_effect: float  # gamma, log: what running second does to a side's speed
    duets: int
    mean_inverse_size: float  # mean over duets of 1 / its pairs
    df: int  # of the within-duet spread
    yardstick_slope: float | None = None  # theta, where the yardstick took part
    yardstick_share: float | None = None  # of the within-duet variance the yardstick explains

    def variance(self, duets: int | None = None, mean_inverse_size: float | None = None
                 ) -> float:
        """Var(mu) with this fit's spreads, for its own duets or for another design."""
        return _variance(self.duet_sd_used, self.within_sd,
                         self.duets if duets is None else duets,
                         self.mean_inverse_size if mean_inverse_size is None else mean_inverse_size)

    @property
    def se(self) -> float:
        return math.sqrt(self.variance())

    @property
    def effective_df(self) -> float:
        """Degrees of freedom of Var(mu)'s estimate. Where the duets' offsets are estimated
        above the floor, Var(mu) is the duets' centres' own spread over D, exactly: D - 1 of
        them. Where the floor holds, its part is fixed and only the pairs' noise is estimated
        (Welch-Satterthwaite, from `df`)."""
        return float(_effective_df(self.duet_sd, self.duet_sd_used, self.within_sd, self.duets,
                                   self.mean_inverse_size, self.df))

    def shares(self) -> dict[str, float]:
        """Of Var(mu): the pairs' own noise, the duets' offsets."""
        whole = self.variance()
        duet = self.duet_sd_used ** 2 / self.duets / whole
        return {"pairs": 1 - duet, "duets": duet}


@dataclass(frozen=True)
class Fits:
    """The fits of many sessions' pairs on one duet schedule (a simulation judges thousands at
    once): each field one value a session, as in Fit."""

    centre: np.ndarray
    within_sd: np.ndarray
    duet_sd: np.ndarray
    duet_sd_used: np.ndarray
    order_effect: np.ndarray
    duets: int
    mean_inverse_size: float
    df: np.ndarray
    centres_var: np.ndarray  # the duets' centres' own variance (ddof 1)
    yardstick_slope: np.ndarray | None = None
    yardstick_share: np.ndarray | None = None

    def spread_variance(self) -> np.ndarray:
        """Var(mu) from the duets' centres' own spread alone, over D (no model)."""
        found: np.ndarray = self.centres_var / self.duets
        return found

    def variance(self, duets: int | None = None, mean_inverse_size: float | None = None
                 ) -> np.ndarray:
        """Var(mu) of each session, as Fit.variance."""
        return _variance(self.duet_sd_used, self.within_sd,
                         self.duets if duets is None else duets,
                         self.mean_inverse_size if mean_inverse_size is None else mean_inverse_size)

    def effective_df(self) -> np.ndarray:
        """Fit.effective_df of each session."""
        return _effective_df(self.duet_sd, self.duet_sd_used, self.within_sd, self.duets,
                             self.mean_inverse_size, self.df)

    def one(self, session: int) -> Fit:
        def at(values: np.ndarray | None) -> float | None:
            return None if values is None else float(values[session])

        return Fit(float(self.centre[session]), float(self.within_sd[session]),
                   float(self.duet_sd[session]), float(self.duet_sd_used[session]),
                   float(self.order_effect[session]), self.duets, self.mean_inverse_size,
                   int(self.df[session]), at(self.yardstick_slope), at(self.yardstick_share))


def _within(columns: list[np.ndarray], y: np.ndarray, index: np.ndarray, counts: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """Least squares of y on the columns within duets (each centred on its duet's mean; index
    numbers each pair's duet from 0, counts each duet's pairs), a row a session: the
    coefficients (sessions x columns), and y's residuals about its duet's mean after them. A
    column constant within every duet of a session takes no part in its fit (coefficient 0)."""
    # Each pair's duet as a 0/1 matrix: the duets' means of every session in one product.
    member = (index[:, None] == np.arange(len(counts))[None, :]).astype(float)

    def centred(v: np.ndarray) -> np.ndarray:
        found: np.ndarray = v - ((v @ member) / counts)[:, index]
        return found

    yc = centred(y)
    if not columns:
        return np.zeros((len(y), 0)), yc
    xc = np.stack([centred(c) for c in columns], axis=2)
    usable = np.abs(xc).sum(axis=1) > 1e-12
    xc = xc * usable[:, None, :]
    # The minimum-norm least squares of each session (np.linalg.lstsq's, batched): a column
    # left out is all zeros, and its coefficient 0.
    coef: np.ndarray = (np.linalg.pinv(xc) @ yc[:, :, None])[:, :, 0]
    return coef, yc - (xc @ coef[:, :, None])[:, :, 0]


def fits(log_ratios: np.ndarray, duets: np.ndarray, b_second: np.ndarray,
         yardstick: np.ndarray | None, min_duet_sd: float, adjust_yardstick: bool) -> Fits:
    """The fit of each session (a row of log_ratios, b_second and yardstick), all on the same
    duets. fit() is this for one session."""
    y = log_ratios
    names, index, sizes = np.unique(duets, return_inverse=True, return_counts=True)
    columns = [b_second]
    use_yardstick = adjust_yardstick and yardstick is not None
    if use_yardstick:
        assert yardstick is not None
        columns.append(yardstick)
    coef, residuals = _within(columns, y, index, sizes)
    gamma = coef[:, 0]
    adjusted = y - gamma[:, None] * b_second
    slope = share = None
    if yardstick is not None:
        # What the yardstick would explain, whether or not it takes part.
        with_x, with_x_residuals = _within([b_second, yardstick], y, index, sizes)
        # The fit above is already the one without the yardstick unless it took part.
        without = ((_within([b_second], y, index, sizes)[1] if use_yardstick
                    else residuals) ** 2).sum(axis=1)
        slope = with_x[:, 1]
        explained = (with_x_residuals ** 2).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(without > 0, 1 - explained / without, 0.0)
        if use_yardstick:
            adjusted = adjusted - slope[:, None] * (yardstick - yardstick.mean(axis=1,
                                                                            keepdims=True))
    df = len(duets) - len(names) - np.count_nonzero(coef, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        within_sd = np.where(df > 0, np.sqrt((residuals ** 2).sum(axis=1) / df), np.inf)
    centres = signed_rank.centres(adjusted, index, sizes)
    inverse = float(np.mean(1 / sizes))
    between = centres.var(axis=1, ddof=1) if len(names) > 1 else np.zeros(len(y))
    with np.errstate(invalid="ignore"):
        duet_sd = np.where(np.isfinite(within_sd), np.sqrt(np.maximum(
            0.0, between - HL_VARIANCE * within_sd ** 2 * inverse)), np.inf)
    return Fits(centres.mean(axis=1), within_sd, duet_sd, np.maximum(duet_sd, min_duet_sd),
                gamma, len(names), inverse, df, between, slope, share)


def fit(pairs: Pairs, min_duet_sd: float, adjust_yardstick: bool) -> Fit:
    return fits(pairs.log_ratios[None, :], pairs.duets, pairs.b_second[None, :],
                None if pairs.yardstick is None else pairs.yardstick[None, :], min_duet_sd,
                adjust_yardstick).one(0)
