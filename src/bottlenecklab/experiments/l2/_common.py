"""Shared pieces of the paper-004 experiments: the worst of a list, the hidden width of a
width sweep's network (`WIDTH`) and the rows of a sweep with each width's best restart."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from bottlenecklab.experiments._spec import PointResult
from bottlenecklab.measure import Quantity

__all__ = ["WIDTH", "best_rows", "hidden_width", "width_rows", "worst"]


def worst(values: Sequence[float]) -> float:
    """The largest value; `nan` for no values or a `nan` among them (fails every claim)."""
    vals = [float(v) for v in values]
    return max(vals) if vals and all(math.isfinite(v) for v in vals) else math.nan


def hidden_width(model: Any, data: Any = None) -> float:
    """The first hidden layer's width of an FCNN (its rows of `W_1`).

    Args:
        model: an `FCNN`; data: unused (a quantity's function takes both).
    """
    return float(model.weights[0].shape[0])


WIDTH = Quantity(
    "width",
    "the network's hidden width (paper 004, Fig 2's abscissa)",
    function=hidden_width,
    over="a trained FCNN of a width sweep",
    units="count",
)


def width_rows(points: Sequence[PointResult]) -> list[dict[str, float]]:
    """One row per point of a width sweep: its scalars and `width` (the swept
    `model.width`, else the measured one)."""
    return [{WIDTH.name: p.point.get("model.width", p.value(WIDTH)), **p.scalars} for p in points]


def best_rows(rows: Sequence[dict[str, float]], key: Quantity) -> dict[float, dict[str, float]]:
    """Each width's row (seed, restart) with the lowest `key` (`width_rows`)."""
    best: dict[float, dict[str, float]] = {}
    for r in rows:
        w = float(r[WIDTH.name])
        if w not in best or r[key.name] < best[w][key.name]:
            best[w] = r
    return best
