"""Attraction and repulsion forces on a hidden representation (paper 004, §3.1, Fig 1)."""

from __future__ import annotations

import torch

__all__ = [
    "column_basis",
    "constraint_reaction",
    "feasible_directions",
    "forces",
    "project_feasible",
    "ridge",
    "ridge_eps",
]


def ridge(Ks: torch.Tensor, rel: float = 1e-6) -> torch.Tensor:
    """`(K^s + eps I)^{-1}`, `eps = rel Tr K^s / N` (spec Decision). Ks: `[N, N]`."""
    N = Ks.shape[0]
    eps = ridge_eps(Ks, rel)  # a constant, not differentiated
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


def ridge_eps(Ks: torch.Tensor, rel: float = 1e-6) -> float:
    """The Tikhonov ridge `eps = rel Tr K^s / N` of a kernel (spec Decision). Ks: `[N, N]`."""
    return rel * float(Ks.detach().diagonal().sum()) / Ks.shape[0]


def column_basis(Zs: torch.Tensor, eps: float, c: float = 3.0) -> torch.Tensor:
    """Orthonormal basis of the numerical column space of `Zs`: its left singular vectors
    with `s^2 > c eps` (the resolution of the Tikhonov form at ridge `eps`; spec Decision
    "balance on feasible directions", `c = 3`).

    Args:
        Zs: `[N, m]`
        eps: the ridge of the kernel `Zs Zs^T`
        c: the cut in units of `eps`.
    Returns:
        `U` `[N, r]`.
    """
    U, s, _ = torch.linalg.svd(Zs, full_matrices=False)
    return U[:, s.pow(2) > c * eps]


def feasible_directions(
    U_prev: torch.Tensor,
    U: torch.Tensor,
    dsigma: torch.Tensor,
    W_next: torch.Tensor,
    rtol: float = 1e-10,
) -> torch.Tensor:
    """Coordinates of the feasible moves `T_l` of `Z_l` alone (paper 004, Prop 1: the
    constrained set of `L^r`; spec Decision):
    `T_l = {delta : (I - P_{l-1}) delta = 0, (I - P_l)(delta * sigma'(Z_l)) W^_{l+1}^T = 0}`,
    `P` the projectors on `col U_prev`, `col U`. Every `delta = U_prev C`; returned is an
    orthonormal basis `V` `[r n_l, k]` of the `vec(C)` (row-major `C` `[r, n_l]`) in the null
    space of the second constraint, so `T_l = {U_prev mat(V x)}` (an SVD of the constraint
    map restricted to `col U_prev`).

    Args:
        U_prev: `[N, r]` orthonormal basis of col `Zs_{l-1}` (`column_basis`)
        U: `[N, r_l]` orthonormal basis of col `Zs_l`
        dsigma: `sigma'(Z_l)` `[N, n_l]`
        W_next: `W^_{l+1}` `[n_{l+1}, n_l]` (the bias column dropped)
        rtol: singular values of the constraint map below `rtol * max` count as zero.
    """
    N, r = U_prev.shape
    n = dsigma.shape[1]
    Q, _, _ = torch.linalg.svd(U, full_matrices=True)
    Qp = Q[:, U.shape[1] :]  # [N, N - r_l] basis of the complement of col Zs_l
    if Qp.shape[1] == 0:  # no second constraint: every C
        return torch.eye(r * n, dtype=U_prev.dtype, device=U_prev.device)
    T3 = torch.einsum("ia,ip,ij->apj", Qp, U_prev, dsigma)  # [N - r_l, r, n_l]
    J = torch.einsum("apj,kj->akpj", T3, W_next).reshape(Qp.shape[1] * W_next.shape[0], r * n)
    _, s, Vh = torch.linalg.svd(J, full_matrices=True)
    rank = int((s > rtol * s.max()).sum()) if s.numel() and s.max() > 0 else 0
    return Vh[rank:].T


def project_feasible(F: torch.Tensor, U_prev: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
    """Orthogonal projection `Pi_T F` of a force `F` `[N, n_l]` onto
    `T_l = {U_prev mat(V x)}` (`feasible_directions`); `C -> U_prev C` is an isometry."""
    C = (U_prev.T @ F).reshape(-1)  # [r n_l]
    return U_prev @ (V @ (V.T @ C)).reshape(U_prev.shape[1], -1)


def constraint_reaction(
    g: torch.Tensor,
    g_next: torch.Tensor,
    W_next: torch.Tensor,
    dsigma: torch.Tensor,
    U_prev: torch.Tensor,
    U: torch.Tensor,
) -> torch.Tensor:
    """The limit of `A_l + R_l` at a weight-space critical point as `eps -> 0` (derived,
    spec Decision): `N_l = (I - P_{l-1}) g_l - [(I - P_l) g_{l+1} W^_{l+1}] * sigma'(Z_l)`,
    the reaction of the constraints `col Z_l in col Zs_{l-1}`, `col Z_{l+1} in col Zs_l`.

    Args:
        g: `dC/dZ_l` `[N, n_l]`
        g_next: `dC/dZ_{l+1}` `[N, n_{l+1}]`
        W_next: `W^_{l+1}` `[n_{l+1}, n_l]`
        dsigma: `sigma'(Z_l)` `[N, n_l]`
        U_prev: orthonormal basis of col `Zs_{l-1}` (`column_basis`).
        U: orthonormal basis of col `Zs_l`.
    """
    perp_prev = g - U_prev @ (U_prev.T @ g)
    perp_next = g_next - U @ (U.T @ g_next)
    return perp_prev - (perp_next @ W_next) * dsigma
