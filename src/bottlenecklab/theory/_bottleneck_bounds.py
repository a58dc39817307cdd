"""Bottleneck bounds of paper 001 as pure formulas: the distance of a weight matrix to the
rank-`k` partial isometries (Thm 15) and the representation bound of Cor 8 (App. B, Cor 17)."""

from __future__ import annotations

import math

import numpy as np
import torch

__all__ = ["partial_isometry_distance_sq", "representation_bottleneck_bound"]


def partial_isometry_distance_sq(W: np.ndarray | torch.Tensor, k: int) -> float:
    """`d_k(W)^2 = sum_{i<=k} (s_i - 1)^2 + sum_{i>k} s_i^2` (paper 001, Thm 15).

    The squared Frobenius distance of `W` to the nearest rank-`k` partial isometry.

    Args:
        W: `[m, n]`
        k: `0 <= k <= min(m, n)`.
    """
    if isinstance(W, torch.Tensor):
        W = W.detach().cpu().to(torch.float64).numpy()
    s = np.linalg.svd(np.asarray(W, dtype=np.float64), compute_uv=False)
    if not 0 <= k <= s.size:
        raise ValueError(f"k must be in [0, {s.size}], got {k}")
    return float(np.sum((s[:k] - 1.0) ** 2) + np.sum(s[k:] ** 2))


def representation_bottleneck_bound(
    norm_sq: float,
    depth: int,
    k: int,
    ntk_scale: float,
    log_top_k_at_x: float,
    log_top_k_min: float,
    p: float = 0.25,
) -> float:
    """Bound on `s_{k+1}(a~_l(X) / sqrt N)` met by at least `(1 - 2p) L` layers (paper 001,
    Cor 8 as proved in App. B, Cor 17; balanced parameters).

    With `c1 = ||theta||^2 - k L`, `Phi = c1 - 2 log|Jf(x)|_(k)` and
    `Psi = c max{1, e^{c1/k}} / (k min_i |Jf(x_i)|_(k)^{2/k})`, the bound is
    `sqrt(Phi) (sqrt(Psi) + sqrt(p)) / (p sqrt(L))`.

    Args:
        norm_sq: `||theta||^2`
        depth: `L`
        k: the rank `k`
        ntk_scale: `c = Tr Theta(X, X) / (N L)`;
        log_top_k_at_x: `log |Jf(x)|_(k)` at the chosen point `x`;
        log_top_k_min: `min_i log |Jf(x_i)|_(k)` over the training points;
        p: the fraction `p in (0, 1/2)`.
    Returns:
        The bound (`nan` where `Phi < 0`, which Thm 15 forbids).
    """
    c1 = norm_sq - k * depth
    phi = c1 - 2.0 * log_top_k_at_x
    if not phi >= 0:
        return float("nan")
    # max{1, e^{c1/k}} / min_i |J|_(k)^{2/k}, in logs to avoid overflow
    log_psi = (
        math.log(ntk_scale / k) + max(0.0, c1 / k) - (2.0 / k) * log_top_k_min
        if ntk_scale > 0
        else -math.inf
    )
    psi_sqrt = math.exp(0.5 * log_psi) if log_psi < 700 else math.inf
    return math.sqrt(phi) * (psi_sqrt + math.sqrt(p)) / (p * math.sqrt(depth))
