"""Minimal-norm weights of a representation path (paper 000, §1.3, Lagrangian form)."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from bottlenecklab.measure._coi import as_float64, features

__all__ = ["min_norm_weights"]


def min_norm_weights(path: Sequence[torch.Tensor], rho: torch.Tensor, leak: float) -> torch.Tensor:
    """`W_l^T = S_{l-1}^+ (L~ A_{l-1} + V_l)`, `V_l = (A_l - A_{l-1}) / rho_l` (paper 000, §1.3).

    The smallest weights (in Frobenius norm) that move `A_{l-1}` to `A_l` through the layer
    `A_l = (1 - rho_l L~) A_{l-1} + rho_l S_{l-1} W_l^T`, `S = [relu(A), 1]`.

    Args:
        path: `[A_0, ..., A_L]`, each `[N, w]`
        rho: layer steps `[L]`
        leak: `L~`.
    Returns:
        `[L, w, w+1]` in float64.
    """
    rho = as_float64(rho)
    out = []
    for l in range(1, len(path)):
        A_prev, A = as_float64(path[l - 1]), as_float64(path[l])
        target = leak * A_prev + (A - A_prev) / rho[l - 1]  # [N, w]
        Wt = torch.linalg.lstsq(features(A_prev), target, driver="gelsd").solution  # [w+1, w]
        out.append(Wt.T)
    return torch.stack(out)
