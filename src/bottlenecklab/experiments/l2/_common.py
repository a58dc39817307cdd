"""Shared pieces of the paper-004 experiments: the worst of a list, and the rows of a
width sweep with each width's best restart."""

from __future__ import annotations

import math
from collections.abc import Sequence

from bottlenecklab.experiments._spec import PointResult

__all__ = ["best_rows", "width_rows", "worst"]


def worst(values: Sequence[float]) -> float:
    """The largest value; `nan` for no values or a `nan` among them (fails every claim)."""
    vals = [float(v) for v in values]
    return max(vals) if vals and all(math.isfinite(v) for v in vals) else math.nan


def width_rows(points: Sequence[PointResult]) -> list[dict[str, float]]:
    """One row per point of a width sweep: its scalars and `width` (the swept
    `model.width`, else the measured one)."""
    return [{"width": p.point.get("model.width", p.scalars["width"]), **p.scalars} for p in points]


def best_rows(rows: Sequence[dict[str, float]], key: str) -> dict[float, dict[str, float]]:
    """Each width's row (seed, restart) with the lowest `key` (`width_rows`)."""
    best: dict[float, dict[str, float]] = {}
    for r in rows:
        w = float(r["width"])
        if w not in best or r[key] < best[w][key]:
            best[w] = r
    return best
