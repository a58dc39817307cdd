"""Representation cost of deep linear networks: closed form, its large-depth expansion,
the optimal factorization and the representation geodesic (papers 001/002)."""

from __future__ import annotations

import numpy as np
import torch

__all__ = [
    "factorization_errors",
    "linear_cost_expansion",
    "linear_cost_remainder_constant",
    "linear_cost_remainders",
    "linear_geodesic_grams",
    "linear_representation_cost",
    "nonzero_singular_values",
    "optimal_linear_weights",
]


def _as_float64(A: np.ndarray | torch.Tensor) -> np.ndarray:
    if isinstance(A, torch.Tensor):
        A = A.detach().cpu().to(torch.float64).numpy()
    return np.asarray(A, dtype=np.float64)


def nonzero_singular_values(A: np.ndarray | torch.Tensor) -> np.ndarray:
    """The non-zero singular values of `A` in float64, largest first.

    "Non-zero" is `s_i > max(d_out, d_in) * eps * s_1` (the round-off level of the SVD,
    as `numpy.linalg.matrix_rank`).

    Args:
        A: `[d_out, d_in]` numpy array or torch tensor.
    """
    a = _as_float64(A)
    s = np.linalg.svd(a, compute_uv=False)
    if s.size == 0 or s[0] == 0.0:
        return s[:0]
    return s[s > max(a.shape) * np.finfo(np.float64).eps * s[0]]


def linear_representation_cost(A: np.ndarray | torch.Tensor, depth: int) -> float:
    """`R(A; L) = L sum_i s_i(A)^{2/L}` over the non-zero singular values (paper 001, §3).

    The minimal `||theta||^2` of a depth-`L` linear network computing `x -> A x`. Computed
    as `L rank + L sum_i expm1((2/L) log s_i)` in float64, which keeps the `O(1)` and
    `O(1/L)` terms exact at large `L` (the naive sum loses them to cancellation).

    Args:
        A: `[d_out, d_in]` numpy array or torch tensor.
        depth: `L >= 1`.
    """
    if depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth}")
    s = nonzero_singular_values(A)
    L = float(depth)
    return float(L * s.size + L * np.sum(np.expm1((2.0 / L) * np.log(s))))


def linear_cost_expansion(A: np.ndarray | torch.Tensor) -> tuple[float, float, float]:
    """`(R0, R1, R2)` of `R(A; L) = L R0 + R1 + R2 / L + O(1/L^2)` (paper 001, §1.1 and §3).

    `R0 = Rank A`, `R1 = 2 log|A|_+` (`|A|_+`: product of the non-zero singular values),
    `R2 = (1/2) ||log_+(A^T A)||_F^2 = 2 sum_i (log s_i)^2`.

    Args:
        A: `[d_out, d_in]` numpy array or torch tensor.
    """
    logs = np.log(nonzero_singular_values(A))
    return float(logs.size), float(2.0 * logs.sum()), float(2.0 * np.sum(logs**2))


def linear_cost_remainder_constant(A: np.ndarray | torch.Tensor) -> float:
    """`(4/3) sum_i (log s_i)^3`: `R(A; L) - (L R0 + R1 + R2/L) = this / L^2 + O(1/L^3)`.

    The next term of the series `L sum_i exp((2/L) log s_i)` (spec `depth-and-rank.md`).

    Args:
        A: `[d_out, d_in]` numpy array or torch tensor.
    """
    logs = np.log(nonzero_singular_values(A))
    return float(4.0 / 3.0 * np.sum(logs**3))


def _semi_orthonormal(n: int, r: int, rng: np.random.Generator) -> np.ndarray:
    """A Haar-random `[n, r]` matrix with orthonormal columns (`n >= r`)."""
    q, rr = np.linalg.qr(rng.standard_normal((n, r)))
    return q * np.sign(np.diag(rr))


def optimal_linear_weights(
    A: np.ndarray | torch.Tensor, depth: int, width: int | None = None, *, seed: int = 0
) -> list[np.ndarray]:
    """A minimal-norm factorization `A = W_L ... W_1`: `W_l = U_l S^{1/L} U_{l-1}^T`.

    With `A = U S V^T` (`S` `[r, r]`, `r = Rank A`), `U_0 = V`, `U_L = U` and Haar-random
    semi-orthonormal `U_l` `[width, r]` for the hidden layers (paper 001, proof of
    Prop 14(3)); `sum_l ||W_l||_F^2 = L sum_i s_i^{2/L}`.

    Args:
        A: `[d_out, d_in]`
        depth: `L`
        width: hidden width `>= r` (default `r`)
        seed: seed of the hidden `U_l`.
    Returns:
        `[W_1, ..., W_L]`, `W_l` of shape `[n_l, n_{l-1}]` (float64).
    """
    a = _as_float64(A)
    U, s, Vt = np.linalg.svd(a, full_matrices=False)
    r = nonzero_singular_values(a).size
    U, s, V = U[:, :r], s[:r], Vt[:r].T
    width = r if width is None else width
    if width < r:
        raise ValueError(f"width {width} is below the rank {r}")
    rng = np.random.default_rng(seed)
    bases = [V] + [_semi_orthonormal(width, r, rng) for _ in range(depth - 1)] + [U]
    root = np.diag(s ** (1.0 / depth))
    return [bases[l + 1] @ root @ bases[l].T for l in range(depth)]


def linear_geodesic_grams(
    A: np.ndarray | torch.Tensor, X: np.ndarray | torch.Tensor, depth: int
) -> list[np.ndarray]:
    """Hidden Gram matrices of the optimal factorization: `X (A^T A)^{l/L} X^T`, `l = 1..L-1`.

    The representation geodesic of a deep linear network (paper 002, slide
    'Representation geodesics'); `(A^T A)^{l/L} = V S^{2l/L} V^T`.

    Args:
        A: `[d_out, d_in]`
        X: inputs `[N, d_in]`
        depth: `L`.
    Returns:
        `L - 1` matrices `[N, N]` (float64).
    """
    a, x = _as_float64(A), _as_float64(X)
    _, s, Vt = np.linalg.svd(a, full_matrices=False)
    r = nonzero_singular_values(a).size
    XV = x @ Vt[:r].T  # [N, r]
    return [(XV * s[:r] ** (2.0 * l / depth)) @ XV.T for l in range(1, depth)]


def linear_cost_remainders(
    A: np.ndarray | torch.Tensor, depths: tuple[int, ...] | list[int]
) -> list[dict[str, float]]:
    """`R(A; L)` and its remainder `R(A; L) - (L R0 + R1 + R2 / L)` at each depth (paper
    001 §1.1, §3: the remainder is `O(L^-2)`, `L^2` times it tends to
    `linear_cost_remainder_constant`).

    Args:
        A: `[d_out, d_in]`
        depths: the depths `L`.
    Returns:
        One row `{"depth", "cost", "remainder"}` per depth.
    """
    r0, r1, r2 = linear_cost_expansion(A)
    rows = []
    for L in depths:
        cost = linear_representation_cost(A, L)
        rows.append({"depth": L, "cost": cost, "remainder": cost - (L * r0 + r1 + r2 / L)})
    return rows


def factorization_errors(
    A: np.ndarray | torch.Tensor, X: np.ndarray, depth: int, width: int, *, seed: int = 2
) -> dict[str, float]:
    """How exactly `optimal_linear_weights` is optimal (paper 001, Prop 14; paper 002
    'Representation geodesics'): the relative errors of the product vs `A`, of
    `sum ||W_l||^2` vs `R(A; L)`, and the largest of its hidden Grams vs
    `linear_geodesic_grams`.

    Args:
        A: `[d_out, d_in]`
        X: inputs `[N, d_in]`
        depth: `L`; width: hidden width; seed: seed of the hidden bases.
    Returns:
        `{"A", "norm", "gram"}` (relative errors; round-off for an exact construction).
    """
    a = _as_float64(A)
    Ws = optimal_linear_weights(a, depth, width, seed=seed)
    prod, h, gram = Ws[0], X, 0.0
    for W, G in zip(Ws[:-1], linear_geodesic_grams(a, X, depth)):
        h = h @ W.T  # [N, n_l]
        gram = max(gram, np.linalg.norm(h @ h.T - G) / np.linalg.norm(G))
    for W in Ws[1:]:
        prod = W @ prod
    norm = sum(float(np.sum(W**2)) for W in Ws)
    return {
        "A": float(np.linalg.norm(prod - a) / np.linalg.norm(a)),
        "norm": abs(norm / linear_representation_cost(a, depth) - 1.0),
        "gram": float(gram),
    }
