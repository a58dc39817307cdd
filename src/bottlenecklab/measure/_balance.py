"""Balancedness at a critical point of the regularized loss: of a leaky ResNet's weights
(paper 000, App. A.3, Prop 10) and of a fully-connected network at a critical point of
`C + lam ||theta||^2` (paper 001, §2: the rescaling symmetry of each hidden neuron)."""

from __future__ import annotations

from typing import Any

import numpy as np

from bottlenecklab.measure._costs import float64_copy
from bottlenecklab.measure._hamiltonian import LayerTable
from bottlenecklab.measure._representation import balance_residuals

__all__ = ["balancedness_residual", "fcnn_balance_residuals"]


def balancedness_residual(table: LayerTable, leak: float) -> np.ndarray:
    """Relative residual of Prop 10 per layer, `[L]`.

    At a critical point `||W_p||^2 = ||W_0||^2 + L~ int_0^p ||b_q||^2 dq` (`W` with its bias
    column `b`). Discretized at the layer positions `p_l` (trapezoid rule between them):
    `(predicted_l - ||W_l||^2) / ||W_l||^2` with `predicted_1 = ||W_1||^2`.
    """
    w2, b2 = table.column("W_norm_sq"), table.column("bias_norm_sq")
    p = table.column("p")
    increments = leak * np.diff(p) * 0.5 * (b2[1:] + b2[:-1])  # [L-1]
    predicted = w2[0] + np.concatenate([[0.0], np.cumsum(increments)])
    return (predicted - w2) / np.maximum(w2, 1e-300)


def fcnn_balance_residuals(model: Any) -> dict[str, np.ndarray]:
    """Per-layer residuals of the balance conditions, `l = 1..L-1`.

    At a critical point with `lam > 0` (any `beta`), for every hidden neuron `i` of layer
    `l`: `||W_{l,i.}||^2 + b_{l,i}^2 = ||W_{l+1,.i}||^2`; summed over `i`:
    `||W_{l+1}||_F^2 = ||W_l||_F^2 + ||b_l||^2`. Both relative to `||W_{l+1}||_F^2`.

    Args:
        model: an `FCNN` (positively homogeneous or linear activation).
    Returns:
        `{"summed": [L-1], "per_neuron": [L-1]}`: `|sum_i (in_i - out_i)| / ||W_{l+1}||^2`
        and `sum_i |in_i - out_i| / ||W_{l+1}||^2`.
    """
    net = float64_copy(model)
    return balance_residuals(list(net.weights), list(net.biases))
