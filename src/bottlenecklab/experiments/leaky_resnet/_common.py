"""What the trained-network experiments of paper 000 share: the layer measurement, the
layer regions, and the convergence gate of their claims."""

from __future__ import annotations

from typing import Any

import numpy as np

from bottlenecklab.experiments._claims import gated
from bottlenecklab.experiments._spec import Claim, PointResult
from bottlenecklab.measure import LayerTable, costs, hamiltonian_summary, leaky_resnet_layers
from bottlenecklab.tasks import Dataset

__all__ = ["MAX_RESIDUAL", "converged", "layer_measurement", "region", "worst_residual"]

# Convergence gate of every claim about a trained leaky ResNet: the median over layers of
# the critical-point residual `||W_l - L~ B_l^T S_{l-1}|| / ||W_l||` (0 at a critical point
# of the regularized loss, paper 000 §1.1) must be at most this at every grid point. The
# spec's numerical notes: a prototype at residuals 0.3-2 still had a negative
# `-(2/L~)H`; the Hamiltonian is only meaningful below that. An untrained network sits
# at residuals of order 1 or more.
MAX_RESIDUAL = 0.3


def layer_measurement(
    model: Any, data: Dataset, lam: float, gamma0: float
) -> tuple[LayerTable, dict[str, float]]:
    """The per-layer table (training set, float64) with its Hamiltonian summary and costs."""
    table = leaky_resnet_layers(model, data.x_train, data.y_train, lam, gamma0=gamma0)
    scalars = hamiltonian_summary(table)
    scalars.update(costs(model, data))
    scalars["k_star"] = float(data.k_star) if data.k_star is not None else float("nan")
    return table, scalars


def region(table: LayerTable, lo: float, hi: float, at: str = "p_in") -> np.ndarray:
    """Boolean mask `[L]` of the layers whose position lies in `[lo, hi)`.

    `at="p_in"` (input position `p_{l-1}`) for the energies of layer `l`, which are those
    of `A_{l-1}` (`measure.INPUT_PAIRED`); `at="p"` (`p_l`) for quantities of `A_l`, `W_l`.
    """
    return (table.column(at) >= lo) & (table.column(at) < hi)


def worst_residual(results: list[PointResult]) -> float:
    """The largest median critical-point residual over the finished grid points."""
    values = [r.scalars.get("cp_residual_median", float("nan")) for r in results]
    return max(values) if values else float("nan")


def converged(claims: list[Claim], results: list[PointResult], threshold: float) -> list[Claim]:
    """Every claim gated on `worst_residual(results) <= threshold` (`_claims.gated`)."""
    residual = worst_residual(results)
    what = "largest median critical-point residual over the grid"
    return [gated(c, residual, threshold, what) for c in claims]
