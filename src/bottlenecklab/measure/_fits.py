"""Least-squares fits of measured series: lines and log-log slopes (growth exponents)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["fit_line", "loglog_slope"]


def fit_line(x: Sequence[float], y: Sequence[float]) -> tuple[float, float]:
    """Ordinary least squares `y ~ slope * x + intercept`; returns `(slope, intercept)`.

    Needs at least two distinct `x`; non-finite pairs are dropped (`nan` if fewer remain).
    """
    xa, ya = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    keep = np.isfinite(xa) & np.isfinite(ya)
    xa, ya = xa[keep], ya[keep]
    if xa.size < 2 or np.ptp(xa) == 0:
        return float("nan"), float("nan")
    slope, intercept = np.polyfit(xa, ya, 1)
    return float(slope), float(intercept)


def loglog_slope(x: Sequence[float], y: Sequence[float]) -> float:
    """The exponent `a` of `y ~ C x^a`: slope of `log y` against `log x` (positive pairs only).

    E.g. a quantity that is bounded in `L~` has slope `<= 0` up to noise; one growing like
    `sqrt(L~)` has slope `1/2`.
    """
    xa, ya = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    keep = (xa > 0) & (ya > 0)
    return fit_line(np.log(xa[keep]), np.log(ya[keep]))[0]
