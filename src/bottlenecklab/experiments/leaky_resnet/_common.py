"""Shared measurement of a trained leaky ResNet: the layer table and the data costs."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from bottlenecklab.measure import LayerTable, hamiltonian_summary, leaky_resnet_layers
from bottlenecklab.tasks import Dataset, data_cost

__all__ = ["costs", "layer_measurement", "region"]


def costs(model: Any, data: Dataset) -> dict[str, float]:
    """`train_cost`, `test_cost` (`C = (1/N)||Y - Y_hat||^2`) and `test_error = test_cost/d_out`."""
    out: dict[str, float] = {}
    with torch.no_grad():
        m64 = model.to(torch.float64)
        for split, X, Y in (
            ("train", data.x_train, data.y_train),
            ("test", data.x_test, data.y_test),
        ):
            out[f"{split}_cost"] = float(data_cost(m64(torch.as_tensor(X)), torch.as_tensor(Y)))
    out["test_error"] = out["test_cost"] / data.d_out
    return out


def layer_measurement(
    model: Any, data: Dataset, lam: float, gamma0: float
) -> tuple[LayerTable, dict[str, float]]:
    """The per-layer table (training set, float64) with its Hamiltonian summary and costs."""
    table = leaky_resnet_layers(model, data.x_train, data.y_train, lam, gamma0=gamma0)
    scalars = hamiltonian_summary(table)
    scalars.update(costs(model, data))
    scalars["k_star"] = float(data.k_star) if data.k_star is not None else float("nan")
    return table, scalars


def region(table: LayerTable, lo: float, hi: float) -> np.ndarray:
    """Boolean mask `[L]` of the layers whose input position `p_{l-1}` lies in `[lo, hi)`.

    The input position is used because layer `l`'s energies are those of `A_{l-1}`.
    """
    p = table.column("p")
    p_in = p - table.column("rho")
    return (p_in >= lo) & (p_in < hi)
