"""Representation and covariance forms of the L2-regularized loss (paper 004, Prop 1, 3; App B).

Rows = samples. Layer `l` maps `Zs_{l-1} = [sigma(Z_{l-1}), beta 1]` `[N, n_{l-1}+1]` to
`Z_l = Zs_{l-1} W_l^T`, `W_l = [W | b]` `[n_l, n_{l-1}+1]` (bias column last, decayed).
Pseudo-inverses cut singular values of `Zs` below `r s_max` and eigenvalues of
`K^s = Zs Zs^T` below `r^2 max` (spec `l2-sparsity.md`, Decision: matched cut-offs), so
that the identities below hold exactly for any `r`.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

__all__ = [
    "R_CUTOFF",
    "covariance_term",
    "linear_kernels",
    "null_projector",
    "pinv_cut",
    "reformulated_losses",
    "representation_term",
    "representation_weights",
]

R_CUTOFF = 1e-7  # spec Decision: r^2 = 1e-14 stays above float64 round-off


def pinv_cut(A: torch.Tensor, r: float = R_CUTOFF) -> torch.Tensor:
    """Moore-Penrose pseudo-inverse dropping singular values below `r s_max`.

    Args:
        A: `[m, n]`. Returns `[n, m]`.
    """
    U, s, Vh = torch.linalg.svd(A, full_matrices=False)
    if s.numel() == 0 or float(s.max()) == 0.0:
        return torch.zeros_like(A.T)
    keep = s > r * s.max()
    return Vh[keep].T @ torch.diag(1.0 / s[keep]) @ U[:, keep].T


def null_projector(Zs_prev: torch.Tensor, r: float = R_CUTOFF) -> torch.Tensor:
    """`P_perp = I - Zs^+ Zs`, the projector on the null space of `Zs_{l-1}` (paper 004, App B).

    Args:
        Zs_prev: `[N, n_{l-1}+1]`. Returns `[n_{l-1}+1, n_{l-1}+1]`.
    """
    n = Zs_prev.shape[1]
    eye = torch.eye(n, dtype=Zs_prev.dtype, device=Zs_prev.device)
    return eye - pinv_cut(Zs_prev, r) @ Zs_prev


def representation_weights(Zs_prev: torch.Tensor, Z: torch.Tensor, r: float = R_CUTOFF):
    """`Psi`: the minimal-norm weights `W_l^T = Zs_{l-1}^+ Z_l` (paper 004, §3, Prop 1).

    Args:
        Zs_prev: `[N, n_{l-1}+1]`
        Z: `[N, n_l]`. Returns `W_l` `[n_l, n_{l-1}+1]`.
    """
    return (pinv_cut(Zs_prev, r) @ Z).T


def representation_term(Zs_prev: torch.Tensor, Z: torch.Tensor, r: float = R_CUTOFF):
    """`||Zs_{l-1}^+ Z_l||_F^2` (paper 004, Prop 1). Args: Zs_prev `[N, m]`; Z `[N, n_l]`."""
    return (pinv_cut(Zs_prev, r) @ Z).pow(2).sum()


def covariance_term(K: torch.Tensor, Ks_prev: torch.Tensor, r: float = R_CUTOFF):
    """`Tr[K_l (K^s_{l-1})^+]`, eigenvalues of `K^s` below `r^2 max` dropped (paper 004, Prop 3).

    Args:
        K: `Z_l Z_l^T` `[N, N]`
        Ks_prev: `Zs_{l-1} Zs_{l-1}^T` `[N, N]` (PSD).
    """
    mu, U = torch.linalg.eigh(Ks_prev)
    top = float(mu.max()) if mu.numel() else 0.0
    if top <= 0.0:
        return torch.zeros((), dtype=K.dtype)
    keep = mu > r * r * top
    Uk = U[:, keep]  # [N, k]
    return ((Uk.T @ K @ Uk).diagonal() / mu[keep]).sum()


def reformulated_losses(
    Zs_prev: Sequence[torch.Tensor],
    Z: Sequence[torch.Tensor],
    W: Sequence[torch.Tensor],
    cost: float,
    lam: float,
    r: float = R_CUTOFF,
) -> dict[str, float]:
    """The loss in weight, representation and covariance form, and the null-space part.

    `weight = C + lam sum ||W_l||^2`, `representation = C + lam sum ||Zs_{l-1}^+ Z_l||^2`
    (`L^r`), `covariance = C + lam sum Tr[K_l (K^s_{l-1})^+]` (`L^k`), `null = lam sum
    ||W_l P_perp_l||^2`; `weight = representation + null` and `representation = covariance`
    (paper 004, Prop 1, 3; App B).

    Args:
        Zs_prev: per layer `l = 1..L`, `[N, n_{l-1}+1]`
        Z: `[N, n_l]`
        W: `[n_l, n_{l-1}+1]`
        cost: the data cost `C(Z_L)`
        lam: `lambda`
        r: the matched cut-off.
    """
    weight = rep = cov = null = 0.0
    for S, Zl, Wl in zip(Zs_prev, Z, W):
        weight += float(Wl.pow(2).sum())
        rep += float(representation_term(S, Zl, r))
        cov += float(covariance_term(Zl @ Zl.T, S @ S.T, r))
        null += float((Wl @ null_projector(S, r)).pow(2).sum())
    return {
        "weight": cost + lam * weight,
        "representation": cost + lam * rep,
        "covariance": cost + lam * cov,
        "null": lam * null,
    }


def linear_kernels(X: torch.Tensor, Z_out: torch.Tensor, depth: int, rel: float = 1e-12):
    """`K_l = X M^{l/L} X^T`, `M = X^{-1} Z_L Z_L^T X^{-T}`, at a global minimizer of a deep
    linear net with L2 (paper 004, §3.1 item 2; `beta = 0`, `X` square invertible).

    `M^{l/L}` by `eigh`, eigenvalues below `rel * max` set to 0. Args: X `[N, N]`;
    Z_out: the network's outputs `[N, d_out]`; depth: `L`. Returns `[K_1, ..., K_L]`.
    """
    Xinv = torch.linalg.inv(X)
    M = Xinv @ Z_out @ Z_out.T @ Xinv.T
    mu, U = torch.linalg.eigh((M + M.T) / 2)
    mu = torch.where(mu > rel * mu.max(), mu, torch.zeros_like(mu))
    return [X @ (U * mu.pow(l / depth)) @ U.T @ X.T for l in range(1, depth + 1)]
