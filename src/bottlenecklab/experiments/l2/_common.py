"""Shared pieces of the paper-004 experiments: the worst of a list."""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["worst"]


def worst(values: Sequence[float]) -> float:
    """The largest value; `nan` for no values or a `nan` among them (fails every claim)."""
    vals = [float(v) for v in values]
    return max(vals) if vals and all(math.isfinite(v) for v in vals) else math.nan
