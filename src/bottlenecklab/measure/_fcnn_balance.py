"""Balancedness of a fully-connected network at a critical point of `C + lam ||theta||^2`
(paper 001, §2: the rescaling symmetry of each hidden neuron)."""

from __future__ import annotations

from typing import Any

import numpy as np

from bottlenecklab.measure._costs import float64_copy
from bottlenecklab.measure._representation import balance_residuals

__all__ = ["fcnn_balance_residuals"]


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
