"""Cost of identity as a differentiable function, its Prop 1 bound, and its minima
(paper 000, §1.4).

Rows are samples: `A` is `[N, w]`, `S = sigma(A)` is `[N, w+1]` (with bias) or `relu(A)`
(`[N, w]`, bias-free) and `K = S S^T`. The cost of identity is
`||A||^2_{K + gamma I} = Tr[A^T (K + gamma I)^{-1} A]`.
"""

from __future__ import annotations

import torch

__all__ = ["cost_of_identity", "relative_gamma", "stable_rank"]


def _features(A: torch.Tensor, bias: bool) -> torch.Tensor:
    R = torch.relu(A)
    if not bias:
        return R
    return torch.cat([R, torch.ones(A.shape[0], 1, dtype=A.dtype, device=A.device)], dim=1)


def relative_gamma(A: torch.Tensor, gamma0: float, *, bias: bool = True) -> torch.Tensor:
    """`gamma = gamma0 ||K||_op = gamma0 s_max(S)^2` (the spec's Decision on paper 000, Thm 4)."""
    return gamma0 * torch.linalg.matrix_norm(_features(A, bias), ord=2).pow(2)


def cost_of_identity(
    A: torch.Tensor, *, gamma: float | torch.Tensor = 0.0, bias: bool = True
) -> torch.Tensor:
    """The cost of identity `||A||^2_{K + gamma I}` as a differentiable 0-d tensor (§1.4).

    `gamma > 0` uses the Woodbury form
    `gamma^{-1} (||A||^2 - Tr[(S^T A)^T (S^T S + gamma I)^{-1} (S^T A)])`; `gamma = 0` is
    `||S^+ A||_F^2` by a pseudo-inverse (unstable near rank drops; finite only when the
    columns of `A` lie in the range of `S`, else the paper calls it infinite).

    Args:
        A: `[N, w]`; gamma: absolute ridge (`relative_gamma` gives the scaled one);
        bias: `S = [relu(A), 1]` (`True`) or `relu(A)`.
    """
    S = _features(A, bias)
    if isinstance(gamma, float | int) and gamma == 0:
        return (torch.linalg.pinv(S) @ A).pow(2).sum()
    SA = S.T @ A  # [m, w]
    G = S.T @ S + gamma * torch.eye(S.shape[1], dtype=A.dtype, device=A.device)
    Z = torch.linalg.solve(G, SA)
    return (A.pow(2).sum() - (SA * Z).sum()) / gamma


def stable_rank(A: torch.Tensor) -> torch.Tensor:
    """`||A||_*^2 / ||A||_F^2`, the lower bound of the bias-free cost of identity
    (paper 000, Prop 1: `||A||^2_{K-bar} >= ||A||_*^2 / ||A||_F^2`); 0 for `A = 0`."""
    s = torch.linalg.svdvals(A)
    fro2 = s.pow(2).sum()
    return s.sum().pow(2) / fro2 if fro2 > 0 else fro2
