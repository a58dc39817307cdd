"""Statistics of repeated trials (restarts, seeds): binomial confidence bounds, the trend
of a success rate, differences of adjacent rates. Read by claims of the form "most
restarts escape" or "the success fraction rises with width" (paper 003, Fig 2)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np
import scipy.stats
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

__all__ = ["adjacent_z", "clopper_pearson", "logistic_slope_z"]


def clopper_pearson(
    successes: int, trials: int, level: float, alternative: str = "two-sided"
) -> tuple[float, float]:
    """Exact (Clopper-Pearson) confidence interval `(low, high)` of a binomial success
    probability from `successes` of `trials` draws, at confidence `level` (e.g. 0.95).

    `alternative="greater"` gives the one-sided lower bound (`high = 1`), `"less"` the
    one-sided upper bound (`low = 0`). `scipy.stats.binomtest(...).proportion_ci`.
    """
    ci = scipy.stats.binomtest(int(successes), int(trials), alternative=alternative)
    bounds = ci.proportion_ci(level, "exact")
    return float(bounds.low), float(bounds.high)


def adjacent_z(fractions: Sequence[float], n: int) -> list[float]:
    """Two-proportion z-scores `(p_{k+1} - p_k) / se_k` of adjacent success fractions of
    `n` trials each (`[K] -> [K - 1]`); `se_k` from the Agresti-Caffo estimates
    `(x + 1) / (n + 2)`, finite when a fraction is 0 or 1."""
    p = np.asarray(fractions, dtype=float)
    q = (p * n + 1) / (n + 2)
    se = np.sqrt(q[:-1] * (1 - q[:-1]) / n + q[1:] * (1 - q[1:]) / n)
    return [float(v) for v in (p[1:] - p[:-1]) / se]


def logistic_slope_z(x: Sequence[float], fractions: Sequence[float], n: int) -> float:
    """z-score `b / se(b)` of the slope `b` of a logistic regression of success on `x`,
    from success `fractions` of `n` trials at each `x` (`[K]` each): the maximum
    likelihood fit (scikit-learn, no penalty), `se` from the Fisher information at the fit.

    `nan` where the maximum likelihood estimate does not exist: every trial a success or
    every one a failure, or the successes and failures separated along `x` (every
    success at an `x` no smaller than every failure's, or the reverse), or when the fit
    does not converge.
    """
    xs = np.asarray(x, dtype=float)
    k = np.asarray(fractions, dtype=float) * n
    if not (np.all(np.isfinite(xs)) and np.all(np.isfinite(k))) or len(xs) < 2:
        return math.nan
    hit, miss = xs[k > 0], xs[k < n]
    if not len(hit) or not len(miss) or hit.min() >= miss.max() or hit.max() <= miss.min():
        return math.nan
    # one row per (x, outcome) with its count as the weight
    X = np.concatenate([xs, xs])[:, None]
    y = np.concatenate([np.ones_like(xs), np.zeros_like(xs)])
    w = np.concatenate([k, n - k])
    keep = w > 0
    fit = LogisticRegression(C=math.inf, solver="newton-cholesky", tol=1e-12, max_iter=100)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        try:
            fit.fit(X[keep], y[keep], sample_weight=w[keep])
        except ConvergenceWarning:
            return math.nan
    A = np.stack([np.ones_like(xs), xs], axis=1)  # [K, 2]
    p = 1 / (1 + np.exp(-(A @ np.array([fit.intercept_[0], fit.coef_[0, 0]]))))
    info = A.T @ (A * (n * p * (1 - p))[:, None])  # Fisher information [2, 2]
    try:
        var = np.linalg.inv(info)[1, 1]
    except np.linalg.LinAlgError:
        return math.nan
    return float(fit.coef_[0, 0] / math.sqrt(var)) if var > 0 else math.nan
