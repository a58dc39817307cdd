"""A trained deep linear network against the closed forms of paper 001, §3 and paper 002
('Representation geodesics'): representation cost and hidden Gram matrices."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from bottlenecklab.measure._costs import float64_copy
from bottlenecklab.theory import linear_geodesic_grams, linear_representation_cost

__all__ = ["end_to_end_matrix", "linear_cost_gap", "linear_geodesic_errors"]


def end_to_end_matrix(model: Any) -> np.ndarray:
    """`A_theta = W_L ... W_1`, `[d_out, d_in]` (float64), of a bias-free linear network."""
    net = float64_copy(model)
    A = net.weights[0].detach()
    for W in net.weights[1:]:
        A = W.detach() @ A
    return A.numpy()


def linear_cost_gap(model: Any) -> float:
    """`||theta||^2 / R(A_theta; L) - 1`: relative excess of the parameter norm over the deep
    linear representation cost of the learned matrix (`theory.linear_representation_cost`,
    all non-zero singular values). `>= 0`; `0` exactly for a balanced, aligned network."""
    net = float64_copy(model)
    cost = linear_representation_cost(end_to_end_matrix(net), net.depth)
    norm = float(net.param_norm_sq().detach())
    if cost == 0.0:  # the zero network: any weight is excess
        return 0.0 if norm == 0.0 else float("inf")
    return norm / cost - 1.0


def linear_geodesic_errors(model: Any, X: torch.Tensor | np.ndarray) -> np.ndarray:
    """Relative Frobenius error of each hidden Gram `a_l a_l^T` against the geodesic
    `X (A_theta^T A_theta)^{l/L} X^T` (`theory.linear_geodesic_grams`), `l = 1..L-1`.

    Args:
        model: a linear `FCNN` (`activation="identity"`, `bias_scale=0`)
        X: `[N, d_in]`.
    Returns:
        `[L - 1]`.
    """
    net = float64_copy(model)
    X64 = torch.as_tensor(X, dtype=torch.float64)
    with torch.no_grad():
        _, post = net.forward_path(X64)
    grams = linear_geodesic_grams(end_to_end_matrix(net), X64.numpy(), net.depth)
    errs = []
    for a, G in zip(post[1:], grams):
        K = (a @ a.T).numpy()
        errs.append(float(np.linalg.norm(K - G) / max(np.linalg.norm(G), 1e-300)))
    return np.array(errs)
