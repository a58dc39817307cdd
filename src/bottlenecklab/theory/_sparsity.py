"""Closed forms of the sparsity section of paper 004: the bipartite task (Prop 13-14,
Remark 23) and the counterexample of Prop 19 (App C.1). Spec `l2-sparsity.md`."""

from __future__ import annotations

import math

import torch

__all__ = [
    "bipartite_full_width_weights",
    "bipartite_target",
    "bipartite_wide_optimum",
    "counterexample_loss",
    "counterexample_values",
    "counterexample_weights",
    "pair_directions",
]


def bipartite_target(N: int, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """`B_N = [[N/2 I, 1], [1, N/2 I]] = E^T E`, `E` the incidence matrix of the complete
    bipartite graph `K_{N/2,N/2}` (paper 004, Prop 13). `N` even. Returns `[N, N]`,
    eigenvalues `N` (once), `N/2` (`N - 2` times), `0` (once)."""
    if N < 2 or N % 2:
        raise ValueError(f"N must be even and >= 2, got {N}")
    h = N // 2
    B = torch.ones(N, N, dtype=dtype)
    B[:h, :h] = (N / 2) * torch.eye(h, dtype=dtype)
    B[h:, h:] = (N / 2) * torch.eye(h, dtype=dtype)
    return B


def bipartite_full_width_weights(N: int, dtype: torch.dtype = torch.float64):
    """Width-`N` exact fit of `B_N` from `X = I_N` (paper 004, Remark 23):
    `W_1 = sqrt(N/2) I`, `W_2 = sqrt(2/N) B_N`, `||theta||^2 = N^2 + N`. Returns `(W_1, W_2)`,
    each `[N, N]`."""
    eye = torch.eye(N, dtype=dtype)
    return math.sqrt(N / 2) * eye, math.sqrt(2 / N) * bipartite_target(N, dtype)


def bipartite_wide_optimum(N: int, lam: float) -> tuple[float, float]:
    """Derived (spec): the wide optimum soft-thresholds the singular values of `B_N` by
    `lam N` under the mean cost: `(loss / lam, ||theta||^2) = (N^2 - lam N (N-1),
    N^2 - 2 lam N (N-1))`."""
    return N * N - lam * N * (N - 1), N * N - 2 * lam * N * (N - 1)


def pair_directions(N: int, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """The `N^2/4` unit vectors `(e_i + e_j)/sqrt 2`, `i < N/2 <= j` (the cross pairs of
    Prop 13), `[N^2/4, N]`, in the order `(i, j)` row-major."""
    h = N // 2
    rows = []
    for i in range(h):
        for j in range(h, N):
            v = torch.zeros(N, dtype=dtype)
            v[i] = v[j] = 1 / math.sqrt(2)
            rows.append(v)
    return torch.stack(rows)


def counterexample_loss(
    W1: torch.Tensor, W2: torch.Tensor, lam: float, *, summed: bool = True
) -> torch.Tensor:
    """Loss of the width-2 ReLU net of Prop 19 (paper 004, App C.1): `X = (1, -1)^T`,
    `Y = (1, 1)^T`, no bias; `||Y - Y_hat||^2` (summed, the proof's, spec Decision) or its
    mean, plus `lam (||W_1||^2 + ||W_2||^2)`.

    Args:
        W1: `[2]` (or `[B, 2]`) incoming weights
        W2: `[2]` (or `[B, 2]`) outgoing weights.
    """
    x = torch.tensor([1.0, -1.0], dtype=W1.dtype)
    h = torch.relu(x[:, None] * W1[..., None, :])  # [..., 2 samples, 2 neurons]
    y_hat = (h * W2[..., None, :]).sum(-1)  # [..., 2]
    err = (1.0 - y_hat).pow(2).sum(-1)
    if not summed:
        err = err / 2
    return err + lam * (W1.pow(2).sum(-1) + W2.pow(2).sum(-1))


def counterexample_values(lam: float, *, summed: bool = True) -> tuple[float, float]:
    """`(family, global)` loss values of Prop 19: `1 + 2 lam - lam^2` and `4 lam - 2 lam^2`
    summed, `1/2 + 2 lam - 2 lam^2` and `4 lam - 4 lam^2` with the mean cost (spec)."""
    if summed:
        return 1 + 2 * lam - lam**2, 4 * lam - 2 * lam**2
    return 0.5 + 2 * lam - 2 * lam**2, 4 * lam - 4 * lam**2


def counterexample_weights(
    lam: float, angle: float = 0.0, *, summed: bool = True, kind: str = "family", eps: float = 0.0
) -> tuple[torch.Tensor, torch.Tensor]:
    """Weights `(W_1, W_2)` of Prop 19, float64 `[2]` each.

    `kind="family"`: `W_1 = W_2 = (a_1, a_2)`, `(a_1, a_2) = a (cos angle, sin angle)`;
    `kind="global"`: `W_1 = (a, -a)`, `W_2 = (a, a)`; `kind="escape"`: the `+eps` path out of
    the family's end point, `W_1 = (a, -eps)`, `W_2 = (a, +eps)` (004 prints `-eps`, which
    raises the loss; spec). `a^2 = 1 - lam` summed, `1 - 2 lam` mean.
    """
    a = math.sqrt(1 - lam) if summed else math.sqrt(1 - 2 * lam)
    f64 = torch.float64
    if kind == "family":
        v = torch.tensor([a * math.cos(angle), a * math.sin(angle)], dtype=f64)
        return v, v.clone()
    if kind == "global":
        return torch.tensor([a, -a], dtype=f64), torch.tensor([a, a], dtype=f64)
    if kind == "escape":
        return torch.tensor([a, -eps], dtype=f64), torch.tensor([a, eps], dtype=f64)
    raise ValueError(f"kind must be family, global or escape, got {kind!r}")
