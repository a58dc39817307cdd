"""Low-rank bounds at escape directions (paper 003, Thm 3.1, Prop 3.4) and the weak
balancedness of bias-free networks (paper 003, Sec 5)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from bottlenecklab.theory._escape import forward_batched, localized_loss

__all__ = [
    "escape_low_rank_bound",
    "escape_low_rank_budget",
    "escape_low_rank_constant",
    "layer_profile",
    "nonlinearity_ratio",
    "singular_ratio",
    "tail_energy",
    "weak_balancedness",
]


def tail_energy(M: torch.Tensor) -> torch.Tensor:
    """`tail(M) = 1 - ||M||_op^2 / ||M||_F^2` (0 for rank one; paper 003, Thm 3.1).

    `M` `[..., m, n]` -> `[...]`; a zero matrix gives 0.
    """
    s = torch.linalg.svdvals(M)
    f2 = s.pow(2).sum(-1)
    return torch.where(f2 > 0, 1 - s[..., 0].pow(2) / torch.where(f2 > 0, f2, 1.0), 0.0)


def singular_ratio(M: torch.Tensor, floor: float = 1e-10) -> torch.Tensor:
    """`s_2 / s_1` of `M` `[..., m, n]` -> `[...]`, with ratios below `floor` set to `floor`
    (deep layers can be exactly rank one; spec `saddles.md`); 0 when `M` has one column."""
    s = torch.linalg.svdvals(M)
    if s.shape[-1] < 2:
        return torch.zeros(s.shape[:-1], dtype=s.dtype)
    r = s[..., 1] / torch.where(s[..., 0] > 0, s[..., 0], 1.0)
    return r.clamp_min(floor)


def nonlinearity_ratio(Z: torch.Tensor) -> torch.Tensor:
    """`||relu(Z) - Z||_F^2 / ||Z||_F^2` of pre-activations `Z` `[..., N, n]` -> `[...]`
    (paper 003, Thm 3.1; 0 when `Z >= 0`)."""
    z2 = Z.pow(2).sum(dim=(-2, -1))
    d2 = (torch.relu(Z) - Z).pow(2).sum(dim=(-2, -1))
    return torch.where(z2 > 0, d2 / torch.where(z2 > 0, z2, 1.0), 0.0)


def escape_low_rank_budget(
    X: torch.Tensor, G: torch.Tensor, Ws: Sequence[torch.Tensor]
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The budget of non-rank-one layers: both sides of paper 003, Prop 3.4 (App A.4.1), for
    `||theta||^2 <= L`, `L_0 < 0`.

    `lhs = sum_{l=1}^{L-1} ln(||Z^s_l||_F^2 / ||Z^s_l||_op^2) <= rhs = 2 ln(||X||_F ||G||_F /
    s_0)`, `s_0 = -L_0(theta)`. Args: `X` `[N, d_in]`, `G` `[N, d_out]`, `Ws[l]`
    `[R, n_l, n_{l-1}]`. Returns `(lhs, rhs, s_0)`, each `[R]`.
    """
    post = forward_batched(X, Ws)[1][1:]
    s0 = -localized_loss(X, G, Ws)
    lhs = torch.zeros_like(s0)
    for Z in post:
        s = torch.linalg.svdvals(Z)
        lhs = lhs + torch.log(s.pow(2).sum(-1) / s[..., 0].pow(2))
    rhs = 2 * torch.log(torch.linalg.matrix_norm(X) * torch.linalg.matrix_norm(G) / s0)
    return lhs, rhs, s0


def escape_low_rank_constant(X: torch.Tensor, G: torch.Tensor, speed: float) -> float:
    """The constant of the low-rank bound at an optimal escape direction,
    `c = (||X||_F ||G||_F / s*) sqrt(2 ln(||X||_F ||G||_F / s*))` (paper 003, Thm 3.1;
    spec: `s*` the optimal speed, sign typo fixed). Circle: `c ~ 37.7`."""
    q = float(torch.linalg.matrix_norm(X) * torch.linalg.matrix_norm(G)) / speed
    return q * math.sqrt(2 * math.log(q))


def escape_low_rank_bound(layer: int, c: float) -> float:
    """`8 c l^{-1/2} / (1 - c l^{-1/2})` for `l > c^2`, `nan` otherwise (no bound): the
    bound on `tail(W_l)`, `tail(Z^s_l)` and the nonlinearity at an optimal escape
    direction (paper 003, Thm 3.1)."""
    if layer <= c * c:
        return math.nan
    q = c / math.sqrt(layer)
    return 8 * q / (1 - q)


def weak_balancedness(Ws: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    """`b_l = ||W_l[i, :]||^2 - ||W_{l+1}[:, i]||^2` per hidden neuron, `l = 1..L-1`
    (incoming minus outgoing; paper 003, Sec 5). Conserved by gradient flow on any loss of
    a bias-free ReLU net; a GD step with rate `eta` changes it by `eta^2 (||g_in||^2 -
    ||g_out||^2)`. `Ws[l]` `[..., n_l, n_{l-1}]`; returns `[..., n_l]` for each hidden layer."""
    return [Ws[l].pow(2).sum(-1) - Ws[l + 1].pow(2).sum(-2) for l in range(len(Ws) - 1)]


def layer_profile(
    X: torch.Tensor, Ws: Sequence[torch.Tensor], floor: float = 1e-10
) -> list[dict[str, float]]:
    """Per-layer low-rank measures of one unbatched network (paper 003, Thm 3.1).

    Row `l = 1..L`: `tail_W`, `ratio_W` (`s_2/s_1` of `W_l`, floored at `floor`),
    `norm_W`; for hidden layers also `tail_Z` and `ratio_Z` of `Z^s_l` and the
    nonlinearity `||Z^s_l - Z_l||_F^2 / ||Z_l||_F^2` (`nan` at `l = L`).
    Args: `X` `[N, d_in]`, `Ws[l]` `[n_l, n_{l-1}]`.
    """
    pre, post = forward_batched(X, Ws)
    rows = []
    for l, W in enumerate(Ws, start=1):
        row = {
            "layer": float(l),
            "tail_W": float(tail_energy(W)),
            "ratio_W": float(singular_ratio(W, floor)),
            "norm_W": float(W.pow(2).sum().sqrt()),
            "tail_Z": math.nan,
            "ratio_Z": math.nan,
            "nonlinearity": math.nan,
        }
        if l < len(Ws):
            row["tail_Z"] = float(tail_energy(post[l]))
            row["ratio_Z"] = float(singular_ratio(post[l], floor))
            row["nonlinearity"] = float(nonlinearity_ratio(pre[l - 1]))
        rows.append(row)
    return rows
