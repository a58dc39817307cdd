"""Singular values of a circular convolution per frequency, and its modes (paper 002,
slide 'Convolutional Networks'; spec `depth-and-rank.md`, Circular CNN)."""

from __future__ import annotations

import torch

__all__ = ["frequency_order", "frequency_singular_values", "significant_modes"]


def frequency_singular_values(K: torch.Tensor) -> torch.Tensor:
    """`s_{omega, i} = s_i(K^(omega))`, `K^(omega) = sum_q K[:, :, q] e^{-2 pi i omega.q / n}`.

    They are the singular values of the convolution `a -> K (*) a` as a linear map (a
    delta kernel, `K[o, c, 0, 0] = 1{o = c}`, gives all ones).

    Args:
        K: `[c_out, c_in, n, n]`.
    Returns:
        `[n, n, min(c_out, c_in)]` (index `[omega_1, omega_2, i]`, descending in `i`).
    """
    K_hat = torch.fft.fft2(K.detach().to(torch.float64))  # [c_out, c_in, n, n]
    return torch.linalg.svdvals(K_hat.permute(2, 3, 0, 1))


def frequency_order(n: int) -> torch.Tensor:
    """`|omega| = max_j min(omega_j, n - omega_j)` for `omega in {0..n-1}^2`: `[n, n]`."""
    w = torch.arange(n)
    m = torch.minimum(w, n - w)
    return torch.maximum(m[:, None], m[None, :])


def significant_modes(s: torch.Tensor, rel: float) -> list[dict[str, float]]:
    """The modes `(+-omega, i)` with `s_{omega, i} >= rel * max s`, each conjugate pair
    once (`omega` and `-omega mod n` have equal singular values for a real kernel).

    Args:
        s: `[n, n, r]` from `frequency_singular_values`
        rel: relative threshold.
    Returns:
        rows `{"w1", "w2", "i", "value", "order"}`, largest value first.
    """
    n = s.shape[0]
    order = frequency_order(n)
    cut = rel * float(s.max())
    rows = []
    for w1 in range(n):
        for w2 in range(n):
            if (w1, w2) > ((-w1) % n, (-w2) % n):  # the pair's other member
                continue
            for i, v in enumerate(s[w1, w2].tolist()):
                if v >= cut:
                    rows.append(
                        {"w1": w1, "w2": w2, "i": i, "value": v, "order": int(order[w1, w2])}
                    )
    return sorted(rows, key=lambda r: -r["value"])
