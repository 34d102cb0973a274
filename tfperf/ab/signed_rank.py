"""The Hodges-Lehmann estimate of a centre and its Wilcoxon signed-rank interval, exact.

The interval of n values is [W_(k+1), W_(M-k)] of their M = n(n+1)/2 sorted Walsh averages
(pairwise means, each value with itself included). The centre lies below W_(k+1) exactly when
at most k Walsh averages lie below it, and their count is the signed-rank statistic T of the
values less the centre; so the interval covers a symmetric centre with probability
1 - 2 P(T <= k), and k is the largest count that keeps this at or above the confidence asked:
no narrower interval of this form reaches it. The distribution of T is exact for every n (counted, not
approximated), so the interval is the same whenever the same values are judged.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np


@functools.cache
def null_cdf(n: int) -> np.ndarray:
    """P(T <= t) for t = 0..n(n+1)/2, T the signed-rank statistic of n values under the null:
    the count of sign patterns whose positive ranks sum to t, over 2^n."""
    top = n * (n + 1) // 2
    counts = np.zeros(top + 1)
    counts[0] = 1.0
    for rank in range(1, n + 1):  # each rank is in the sum or not
        counts[rank:] = counts[rank:] + counts[:top + 1 - rank].copy()
    cdf: np.ndarray = np.cumsum(counts) / counts.sum()
    return cdf


def excluded(n: int, confidence: float) -> int:
    """How many Walsh averages lie outside the interval on each side (0 when even the widest
    interval of n values falls short of the confidence)."""
    tail = (1 - confidence) / 2
    # k excluded each side misses with P(T <= k) a side: the largest k whose tail fits.
    return max(0, int((null_cdf(n) <= tail).sum()) - 1)


def coverage(n: int, confidence: float) -> float:
    """The interval's exact coverage of a symmetric centre."""
    return 1.0 - 2.0 * float(null_cdf(n)[excluded(n, confidence)])


def hodges_lehmann(values: Sequence[float], confidence: float) -> tuple[float, float, float]:
    """The estimate and the interval of the values' centre."""
    x = np.asarray(values, dtype=float)
    n = len(x)
    if n < 2:
        raise ValueError(f"{n} value(s): an interval needs at least 2")
    i, j = _walsh_pairs(n)
    walsh = np.sort((x[i] + x[j]) / 2)
    k = excluded(n, confidence)
    return float(np.median(walsh)), float(walsh[k]), float(walsh[len(walsh) - 1 - k])


@functools.cache
def _walsh_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(n)


def centre(values: Sequence[float] | np.ndarray) -> float:
    """The Hodges-Lehmann estimate alone."""
    x = np.asarray(values, dtype=float)
    i, j = _walsh_pairs(len(x))
    return float(np.median((x[i] + x[j]) / 2))


def centres(values: np.ndarray, index: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The Hodges-Lehmann estimate of each group's values: `index` numbers each value's group
    from 0, `sizes` counts each group's values (np.unique's return_inverse and return_counts).
    Groups of one size are estimated together, and so are the rows of 2-D values (sessions on
    one schedule: a simulation judges thousands of cases), a row of centres each."""
    found = np.empty((*values.shape[:-1], len(sizes)))
    grouped = values[..., np.argsort(index, kind="stable")]
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    for size in np.unique(sizes):
        mine = np.flatnonzero(sizes == size)
        block = grouped[..., starts[mine, None] + np.arange(size)]
        i, j = _walsh_pairs(int(size))
        found[..., mine] = np.median((block[..., i] + block[..., j]) / 2, axis=-1)
    return found
