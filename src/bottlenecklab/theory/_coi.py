"""Cost of identity, kernel norms and stable rank as pure tensor formulas (paper 000, §1.4).

Rows are samples: `A` is `[N, w]`, `S = sigma(A)` is `[N, w+1]` (with bias) or `relu(A)`
(`[N, w]`, bias-free) and `K = S S^T`. The cost of identity is
`||A||^2_{K + gamma I} = Tr[A^T (K + gamma I)^{-1} A]`. These are the library's only
implementations: `measure` applies them to trained networks (float64, floats out).
"""

from __future__ import annotations

import torch

from bottlenecklab.theory._features import features

__all__ = [
    "cost_of_identity",
    "kernel_condition",
    "kernel_norm_sq",
    "relative_gamma",
    "stable_rank",
]


def relative_gamma(A: torch.Tensor, gamma0: float, *, bias: bool = True) -> torch.Tensor:
    """`gamma = gamma0 ||K||_op = gamma0 s_max(S)^2` (the spec's Decision on paper 000, Thm 4)."""
    return gamma0 * torch.linalg.matrix_norm(features(A, bias), ord=2).pow(2)


def kernel_norm_sq(
    M: torch.Tensor, S: torch.Tensor, gamma: float | torch.Tensor = 0.0
) -> torch.Tensor:
    """`||M||^2_{K + gamma I} = Tr[M^T (K + gamma I)^{-1} M]`, `K = S S^T`, a 0-d tensor.

    `gamma > 0`: the Woodbury form
    `gamma^{-1} (||M||^2 - Tr[(S^T M)^T (S^T S + gamma I)^{-1} (S^T M)])`, an `m x m`
    Cholesky solve instead of `N x N` (spec `leaky-resnets.md`). `gamma = 0`: the
    pseudo-inverse value `||S^+ M||_F^2` (finite only for `M` in the range of `S`; the
    part outside, where paper 000 calls the norm infinite, is `measure.coi_residual`).
    Differentiable in `M` and `S`.

    Args:
        M: `[N, w]`; S: `[N, m]`; gamma: absolute ridge, `>= 0`.
    """
    if float(gamma) < 0:
        raise ValueError(f"gamma must be >= 0, got {float(gamma)}")
    if float(gamma) == 0:
        return (torch.linalg.pinv(S) @ M).pow(2).sum()
    SM = S.transpose(-1, -2) @ M  # [m, w]
    G = S.transpose(-1, -2) @ S + gamma * torch.eye(S.shape[-1], dtype=S.dtype, device=S.device)
    L, info = torch.linalg.cholesky_ex(G)
    if int(info) == 0:
        Z = torch.cholesky_solve(SM, L)  # (S^T S + gamma I)^{-1} S^T M
    else:  # not numerically positive definite (gamma below round-off of S^T S): the
        # relaxed solve, with the eigenvalues bounded below by gamma as they are exactly
        evals, evecs = torch.linalg.eigh(G)
        Z = evecs @ ((evecs.transpose(-1, -2) @ SM) / evals.clamp_min(gamma).unsqueeze(-1))
    return ((M.pow(2).sum() - (SM * Z).sum()) / gamma).clamp_min(0.0)


def kernel_condition(S: torch.Tensor, gamma: float | torch.Tensor = 0.0) -> torch.Tensor:
    """Condition number `(s_1^2 + gamma) / (s_m^2 + gamma)` of `S^T S + gamma I`, a 0-d tensor.

    How many digits `kernel_norm_sq` loses: about `log10` of this (infinite for a singular
    `S` at `gamma = 0`, where the pseudo-inverse value is reported instead).

    Args:
        S: `[N, m]`; gamma: absolute ridge, `>= 0`.
    """
    s2 = torch.linalg.svdvals(S).pow(2)
    if s2.numel() < S.shape[-1]:  # fewer samples than features: S^T S is singular
        s2 = torch.cat([s2, s2.new_zeros(S.shape[-1] - s2.numel())])
    return (s2.max() + gamma) / (s2.min() + gamma)


def cost_of_identity(
    A: torch.Tensor, *, gamma: float | torch.Tensor = 0.0, bias: bool = True
) -> torch.Tensor:
    """The cost of identity `||A||^2_{K + gamma I}`, `S = sigma(A)` (paper 000, §1.4).

    Args:
        A: `[N, w]`; gamma: absolute ridge (`relative_gamma` gives the scaled one);
        bias: `S = [relu(A), 1]` (`True`) or `relu(A)`.
    """
    return kernel_norm_sq(A, features(A, bias), gamma)


def stable_rank(A: torch.Tensor) -> torch.Tensor:
    """`||A||_*^2 / ||A||_F^2`, the lower bound of the bias-free cost of identity
    (paper 000, Prop 1: `||A||^2_{K-bar} >= ||A||_*^2 / ||A||_F^2`); 0 for `A = 0`."""
    s = torch.linalg.svdvals(A)
    fro2 = s.pow(2).sum()
    return s.sum().pow(2) / fro2 if fro2 > 0 else fro2
