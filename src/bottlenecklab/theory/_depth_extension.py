"""Depth extension of an escape direction (paper 003, Prop 3.2, App A.3)."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from bottlenecklab.theory._escape import forward_batched

__all__ = ["extend_depth"]


def extend_depth(
    X: torch.Tensor, G: torch.Tensor, Ws: Sequence[torch.Tensor], k: int = 1
) -> list[torch.Tensor]:
    """A depth-`L + k` network with `L_0` no larger and `||theta'||^2 <= ||theta||^2 + k`.

    Keeps `W_1..W_{L-2}`; picks the neuron `i*` of layer `L - 1` with the most negative
    `<G, relu(Z^s_{L-2} w_i^T) v_i^T>` (`w_i`, `v_i` the unit row `i` of `W_{L-1}` and
    column `i` of `W_L`); with `a = sum_i ||v_i|| ||w_i||` (unnormalized), layer `L - 1`
    gets row 1 `sqrt(a) w_{i*}`, then `k` layers `E_11`, then the last layer column 1
    `sqrt(a) v_{i*}` (paper 003, App A.3; spec `saddles.md`). Rescaling the result onto the
    `sqrt(L + k)` sphere can only raise the speed, hence `s*(L + k) >= s*(L)` (Prop 3.2).

    Args:
        X: `[N, d_in]`
        G: `[N, d_out]`
        Ws: `L >= 2` layers, `[R, n_l, n_{l-1}]` each
            (batched restarts); k: layers inserted (`>= 0`).
    Returns:
        `L + k` layers, `[R, ., .]`.
    """
    L = len(Ws)
    if L < 2:
        raise ValueError(f"extend_depth needs L >= 2 layers, got {L}")
    Wp, WL = Ws[-2], Ws[-1]  # [R, n, m], [R, d_out, n]
    R, n, m = Wp.shape
    row_n = Wp.pow(2).sum(-1).sqrt()  # [R, n]
    col_n = WL.pow(2).sum(-2).sqrt()  # [R, n]
    safe = lambda t: torch.where(t > 0, t, torch.ones_like(t))  # noqa: E731
    w = Wp / safe(row_n)[..., None]  # unit rows [R, n, m]
    v = WL / safe(col_n)[:, None, :]  # unit columns [R, d_out, n]
    # Z^s_{L-2}: [R, N, m] (X itself when L = 2)
    Zs = torch.relu(forward_batched(X, list(Ws[:-2]))[0][-1]) if L > 2 else X
    if Zs.dim() == 2:
        Zs = Zs.expand(R, *Zs.shape)
    h = torch.relu(Zs @ w.mT)  # [R, N, n]
    GV = G @ v  # <G, h_i v_i^T> = sum_N h[:, i] (G v_i): [R, N, n]
    score = (h * GV).sum(-2)  # [R, n]
    dead = (row_n == 0) | (col_n == 0)
    score = torch.where(dead, torch.full_like(score, float("inf")), score)
    i = score.argmin(-1)  # [R]
    a = (row_n * col_n).sum(-1)  # [R]
    ra = a.sqrt()[:, None]
    first = torch.zeros_like(Wp)
    first[:, 0, :] = ra * w[torch.arange(R), i]
    last = torch.zeros_like(WL)
    last[:, :, 0] = ra * v[torch.arange(R), :, i]
    E = torch.zeros(R, n, n, dtype=Wp.dtype)
    E[:, 0, 0] = 1.0
    return [*Ws[:-2], first, *[E.clone() for _ in range(k)], last]
