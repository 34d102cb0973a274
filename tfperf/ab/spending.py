"""Critical values of repeated looks that spend alpha as the information grows.

A case's estimate is judged at several looks and stops at the first decided verdict. The
looks' standardised statistics behave as a Brownian motion seen at its information fractions
t_1 < ... < t_K = 1 (each look holds the data of the one before; their correlation is
sqrt(t_i / t_j)). The bound of look k is set so that, with no change, the statistics have first
crossed the bounds by look k with probability alpha t_k: the power family of Kim and DeMets
with rho = 1, an alpha-spending function (Lan and DeMets, 1983).

The crossing probabilities come from the recursive numerical integration of Armitage,
McPherson and Rowe (Jennison and Turnbull, 2000, chapter 19): the density of the sum that has
not crossed yet is carried from look to look on a grid. Deterministic and fast (milliseconds),
so a kept session judged again gets the same bounds, and a simulation of thousands of sessions
can afford them; a multivariate normal integral by quasi-Monte Carlo took seconds.
"""

from __future__ import annotations

import functools

import numpy as np

_POINTS = 401  # grid points over the region not crossed: bounds agree with 801 to 1e-4


def _normal_pdf(x: np.ndarray, scale: float) -> np.ndarray:
    """The normal density of mean 0, computed as scipy.stats.norm.pdf computes it."""
    z = x / scale
    found: np.ndarray = np.exp(-z**2 / 2.0) / np.sqrt(2 * np.pi) / scale
    return found


def _trapezoid(edge: float) -> tuple[np.ndarray, np.ndarray]:
    x = np.linspace(-edge, edge, _POINTS)
    weights = np.full(_POINTS, x[1] - x[0])
    weights[[0, -1]] /= 2
    return x, weights


@functools.cache
def bounds(fractions: tuple[float, ...], alpha: float,
           spent: tuple[float, ...] | None = None) -> tuple[float, ...]:
    """The critical z of each look, for strictly increasing information fractions ending at 1.
    Two-sided: the statistic crosses when |Z_k| reaches the bound. Alpha is spent by the
    information, or by `spent` (another time scale of the looks, such as their pairs)."""
    # Imported here: most processes that import this module never judge. The normal
    # distribution as scipy.stats.norm computes it (its cdf is ndtr, its sf ndtr of -z; its pdf:
    # _normal_pdf), without importing scipy.stats, which adds 0.4 CPU-s to each process that
    # judges (a session, a command).
    from scipy.optimize import brentq
    from scipy.special import ndtr

    t = np.asarray(fractions, dtype=float)
    pace = t if spent is None else np.asarray(spent, dtype=float)
    if len(t) == 0 or not np.all(np.diff(t) > 0) or not np.isclose(t[-1], 1.0) or t[0] <= 0:
        raise ValueError(f"information fractions must rise strictly to 1: {fractions}")
    found: list[float] = []
    x = weights = density = np.zeros(0)
    for k, now in enumerate(t):
        before = t[k - 1] if k else 0.0
        step = float(np.sqrt(now - before))
        mass = weights * density

        def crossing(z: float, x: np.ndarray = x, mass: np.ndarray = mass, step: float = step,
                     now: float = now, first: bool = k == 0) -> float:
            """P(not crossed before this look, crossed at it)."""
            if first:
                return float(2 * ndtr(-z))
            edge = z * np.sqrt(now)
            beyond = ndtr((x - edge) / step) + ndtr((-edge - x) / step)
            return float(mass @ beyond)

        spend = alpha * (pace[k] - (pace[k - 1] if k else 0.0))
        z = float(brentq(lambda z, spend=spend: crossing(z) - spend, 0.05, 12.0, xtol=1e-8))
        found.append(z)
        new_x, new_weights = _trapezoid(z * float(np.sqrt(now)))
        if k == 0:
            density = _normal_pdf(new_x, float(np.sqrt(now)))
        else:
            density = mass @ _normal_pdf(new_x[None, :] - x[:, None], step)
        x, weights = new_x, new_weights
    return tuple(found)


def fractions(information: list[float]) -> tuple[float, ...]:
    """Information at each look as fractions of the last, to the nearest 1% (the information
    is itself estimated; so the bounds of nearby sessions are computed once), kept strictly
    increasing."""
    return tuple(float(f) for f in fractions_of_rows(np.asarray([information], dtype=float))[0])


def fractions_of_rows(information: np.ndarray) -> np.ndarray:
    """fractions() of each row (a session's looks) at once."""
    # A look's share often sits on a half per cent by construction (a look of 32 pairs on the
    # last one's 256, with the duets' part fixed: 12.5%), and whether it then computes a hair
    # above or below depends on how numpy's SIMD loops divide on this CPU and this array's
    # shape: rounding to 1e-9 first makes such ties round (half to even) the same everywhere.
    shares = np.rint(np.round(100 * information / information[:, -1:], 9))
    # Each look's step at least its share and one more than the last: steps less their look's
    # number never fall, so they are a running maximum.
    shares[:, 0] = np.maximum(shares[:, 0], 1)
    number = np.arange(information.shape[1])
    steps = np.maximum.accumulate(shares - number, axis=1) + number
    found: np.ndarray = steps / steps[:, -1:]
    return found


def power_shares(fractions: np.ndarray, power: float, linear: float = 0.0) -> np.ndarray:
    """The share of alpha spent by each information fraction t: (1 - linear) t^power + linear t.
    A high power keeps nearly all of alpha for the late looks, where a change near the floor
    is decided; a small linear part spends a little early, enough for a clear change to be
    called on few pairs, which t^power alone (1e-9 of alpha by t = 0.02 at power 5) is not."""
    t = np.asarray(fractions, dtype=float)
    shares: np.ndarray = (1 - linear) * t ** power + linear * t
    return shares
