"""Non-negativity of representations inside the bottleneck (paper 000, Prop 5)."""

from __future__ import annotations

from typing import Any

from bottlenecklab.measure._coi import as_float64

__all__ = ["negative_mass"]


def negative_mass(A: Any) -> float:
    """`(||A||_F^2 - ||relu(A)||_F^2) / ||A||_F^2` of `A` `[N, w]`: 0 when `A >= 0` (Prop 5)."""
    A = as_float64(A)
    a2 = float(A.pow(2).sum())
    return (a2 - float(A.clamp_min(0).pow(2).sum())) / max(a2, 1e-300)
