"""Norm growth along an escape direction (paper 003, Prop 2.2, corrected in the spec)."""

from __future__ import annotations

import math

__all__ = ["escape_blowup_time", "escape_norm", "escape_rate", "escape_time_to_norm"]


def escape_rate(speed: float, depth: int) -> float:
    """`k = L^{1 - L/2} s`: `d||theta||/dt = k ||theta||^{L-1}` on the ray of an escape
    direction `rho` (`||rho||^2 = L`, speed `s`), because `L_0(theta_bar) = L^{-L/2} L_0(rho)`
    (paper 003, Prop 2.2; spec decision: the paper uses the unit-sphere speed)."""
    return depth ** (1.0 - depth / 2.0) * speed


def escape_norm(t: float, r0: float, speed: float, depth: int) -> float:
    """`||theta(t)||` from `||theta(0)|| = r0` on the ray of an escape direction.

    `L != 2`: `(r0^{2-L} - (L-2) k t)^{1/(2-L)}` (`inf` at and after the blow-up for
    `L > 2`); `L = 2`: `r0 e^{s t}` (paper 003, Prop 2.2, corrected).
    """
    L = depth
    if L == 2:
        return r0 * math.exp(speed * t)
    base = r0 ** (2 - L) - (L - 2) * escape_rate(speed, L) * t
    if base <= 0:
        return math.inf
    return base ** (1.0 / (2 - L))


def escape_blowup_time(r0: float, speed: float, depth: int) -> float:
    """`r0^{2-L} / ((L-2) k)` for `L > 2`; `inf` for `L <= 2` (no finite-time blow-up)."""
    if depth <= 2:
        return math.inf
    return r0 ** (2 - depth) / ((depth - 2) * escape_rate(speed, depth))


def escape_time_to_norm(r0: float, r: float, speed: float, depth: int) -> float:
    """Time from norm `r0` to norm `r` along an escape direction: `(r0^{2-L} - r^{2-L}) /
    ((L-2) k)` for `L != 2`, `ln(r / r0) / s` for `L = 2` (spec decision: the paper's `+`
    is a typo). For `L > 2` this is `~ r0^{2-L}`: the plateau lasts `~ sigma_0^{2-L}`."""
    L = depth
    if L == 2:
        return math.log(r / r0) / speed
    return (r0 ** (2 - L) - r ** (2 - L)) / ((L - 2) * escape_rate(speed, L))
