"""Attraction and repulsion forces on a hidden representation (paper 004, §3.1, Fig 1)."""

from __future__ import annotations

import torch

__all__ = ["forces", "ridge"]


def ridge(Ks: torch.Tensor, rel: float = 1e-6) -> torch.Tensor:
    """`(K^s + eps I)^{-1}`, `eps = rel Tr K^s / N` (spec Decision). Ks: `[N, N]`."""
    N = Ks.shape[0]
    eps = rel * float(Ks.detach().diagonal().sum()) / N  # a constant, not differentiated
    return torch.linalg.inv(Ks + eps * torch.eye(N, dtype=Ks.dtype, device=Ks.device))


def forces(
    Zs_prev: torch.Tensor,
    Z: torch.Tensor,
    Zs: torch.Tensor,
    Z_next: torch.Tensor,
    dsigma: torch.Tensor,
    lam: float,
    rel: float = 1e-6,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Attraction `A_l = 2 lam G_{l-1} Z_l` and repulsion
    `R_l = -2 lam [G_l K_{l+1} G_l sigma(Z_l)] * sigma'(Z_l)`, `G = (K^s + eps I)^{-1}`: the
    gradients in `Z_l` of `lam Tr[K_l G_{l-1}]` and `lam Tr[K_{l+1} G_l]` (paper 004, §3.1;
    spec). Their sum is the `Z_l`-gradient of the Tikhonov `L^r`.

    Args:
        Zs_prev: `[sigma(Z_{l-1}), beta 1]` `[N, n_{l-1}+1]`
        Z: `Z_l` `[N, n_l]`
        Zs: `[sigma(Z_l), beta 1]` `[N, n_l+1]` (the bias column last)
        Z_next: `[N, n_{l+1}]`
        dsigma: `sigma'(Z_l)` `[N, n_l]`
        lam: `lambda`
        rel: the ridge `eps / (Tr K^s / N)`.
    Returns:
        `(A_l, R_l)`, each `[N, n_l]`.
    """
    G_prev = ridge(Zs_prev @ Zs_prev.T, rel)
    G = ridge(Zs @ Zs.T, rel)
    A = 2 * lam * G_prev @ Z
    S = Zs[:, : Z.shape[1]]  # sigma(Z_l)
    R = -2 * lam * (G @ (Z_next @ Z_next.T) @ G @ S) * dsigma
    return A, R
