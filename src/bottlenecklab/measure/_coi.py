"""Cost of identity and stable rank of a representation (paper 000, §1.4, Prop 1)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

__all__ = [
    "as_float64",
    "coi_residual",
    "cost_of_identity",
    "features",
    "kernel_norm_sq",
    "stable_rank",
]


def as_float64(A: Any) -> torch.Tensor:
    """A detached float64 CPU tensor from a tensor or array."""
    if isinstance(A, torch.Tensor):
        return A.detach().to(device="cpu", dtype=torch.float64)
    return torch.as_tensor(np.asarray(A), dtype=torch.float64)


def features(A: torch.Tensor, bias: bool = True) -> torch.Tensor:
    """`S = [relu(A), 1]` (`bias=True`, `[N, w+1]`) or `relu(A)` (`[N, w]`)."""
    R = torch.relu(A)
    if not bias:
        return R
    return torch.cat([R, torch.ones(A.shape[0], 1, dtype=A.dtype, device=A.device)], dim=1)


def kernel_norm_sq(M: Any, S: Any, gamma: float = 0.0) -> float:
    """`||M||^2_{K + gamma I} = Tr[M^T (K + gamma I)^{-1} M]` with `K = S S^T`.

    `gamma = 0`: the pseudo-inverse value `||S^+ M||_F^2`, by least squares (the part of `M`
    outside the column space of `S`, where the paper calls the norm infinite, is reported
    by `coi_residual`). `gamma > 0`: the Woodbury form
    `gamma^{-1} (||M||^2 - Tr[(S^T M)^T (S^T S + gamma I)^{-1} (S^T M)])`, an
    `m x m` solve instead of `N x N` (spec `leaky-resnets.md`).

    Args:
        M: `[N, w]`; S: `[N, m]`; gamma: absolute ridge, `>= 0`.
    """
    M, S = as_float64(M), as_float64(S)
    if gamma < 0:
        raise ValueError(f"gamma must be >= 0, got {gamma}")
    if gamma == 0:
        sol = torch.linalg.lstsq(S, M, driver="gelsd").solution  # [m, w], = S^+ M
        return float(sol.pow(2).sum())
    SM = S.T @ M  # [m, w]
    G = S.T @ S + gamma * torch.eye(S.shape[1], dtype=S.dtype)  # [m, m]
    L = torch.linalg.cholesky(G)
    Z = torch.cholesky_solve(SM, L)
    return float((M.pow(2).sum() - (SM * Z).sum()) / gamma)


def cost_of_identity(A: Any, *, gamma: float = 0.0, bias: bool = True) -> float:
    """Cost of identity `||A||^2_{K + gamma I}`, `K = S S^T`, `S = sigma(A)` (paper 000, §1.4).

    Args:
        A: representation `[N, w]` (tensor or array).
        gamma: absolute ridge (the kernel is `K + gamma I`); `0` gives `||S^+ A||_F^2` by
            least squares, see `coi_residual` for the part of `A` outside the range of `S`.
        bias: `True` uses `S = [relu(A), 1]`, `False` the bias-free `S = relu(A)`.
    """
    A = as_float64(A)
    return kernel_norm_sq(A, features(A, bias), gamma)


def coi_residual(A: Any, *, bias: bool = True) -> float:
    """Relative part of `A` outside the column space of `S`: `||A - S S^+ A||_F / ||A||_F`.

    Zero when the `gamma = 0` cost of identity is finite (e.g. `A >= 0`).
    """
    A = as_float64(A)
    S = features(A, bias)
    sol = torch.linalg.lstsq(S, A, driver="gelsd").solution
    return float((A - S @ sol).norm() / A.norm().clamp_min(1e-300))


def stable_rank(A: Any) -> float:
    """Stable rank `||A||_*^2 / ||A||_F^2` of `A` `[N, w]` (paper 000, Prop 1 lower bound)."""
    s = torch.linalg.svdvals(as_float64(A))
    fro2 = s.pow(2).sum()
    return float(s.sum().pow(2) / fro2) if fro2 > 0 else 0.0
