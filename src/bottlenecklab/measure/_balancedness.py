"""Balancedness of a leaky ResNet's weights (paper 000, App. A.3, Prop 10)."""

from __future__ import annotations

import numpy as np

from bottlenecklab.measure._hamiltonian import LayerTable

__all__ = ["balancedness_residual"]


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
