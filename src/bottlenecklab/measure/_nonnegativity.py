"""Non-negativity of representations inside the bottleneck (paper 000, Prop 5), applied."""

from __future__ import annotations

from typing import Any

from bottlenecklab import theory
from bottlenecklab.measure._coi import as_float64

__all__ = ["negative_mass"]


def negative_mass(A: Any) -> float:
    """`(||A||_F^2 - ||relu(A)||_F^2) / ||A||_F^2` of `A` `[N, w]` (`theory.negative_mass`),
    in float64: 0 when `A >= 0` (Prop 5)."""
    return float(theory.negative_mass(as_float64(A)))
