"""Explicit bias-free ReLU networks of paper 001 with known parameter norms: the identity on
a completely positive set (Prop 12) and the near-optimal net of Example 20 (App. D.1)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = [
    "IdentityConstruction",
    "identity_construction",
    "non_lipschitz_excess",
    "non_lipschitz_norm_sq",
    "non_lipschitz_table",
    "non_lipschitz_target",
    "non_lipschitz_weights",
    "relu_network",
]


def relu_network(weights: list[np.ndarray], X: np.ndarray) -> np.ndarray:
    """Bias-free ReLU network `x -> W_L relu(... relu(W_1 x))` applied to the rows of `X`.

    Args:
        weights: `[W_1, ..., W_L]`, `W_l` `[n_l, n_{l-1}]`
        X: `[N, n_0]`.
    Returns:
        `[N, n_L]` (the last layer is linear).
    """
    a = np.asarray(X, dtype=np.float64)
    for l, W in enumerate(weights):
        a = a @ W.T
        if l < len(weights) - 1:
            a = np.maximum(a, 0.0)
    return a


@dataclass(frozen=True)
class IdentityConstruction:
    """The Prop 12 network and its domain.

    Args:
        weights: `[W_1 = O, P_{Im O}, ..., P_{Im O}, W_L = O^T]`.
        basis: `[d, k]` orthonormal basis `Q` of `span Omega`; `Omega = {Q c : c >= 0}`.
        O: `[m, d]` with `O Omega ⊂ R^m_+` and `O^T O = P_{span Omega} = Q Q^T`.
    """

    weights: list[np.ndarray]
    basis: np.ndarray
    O: np.ndarray

    def sample(self, n: int, seed: int = 0) -> np.ndarray:
        """`n` points of `Omega`, `[n, d]`: `Q c` with `c = |N(0, I_k)|`."""
        rng = np.random.default_rng(seed)
        c = np.abs(rng.standard_normal((n, self.basis.shape[1])))
        return c @ self.basis.T

    def norm_sq(self) -> float:
        """`||theta||^2 = sum_l ||W_l||_F^2` (no biases); equals `L k` exactly."""
        return float(sum(np.sum(W**2) for W in self.weights))


def identity_construction(k: int, d: int, depth: int, width: int, *, seed: int = 0):
    """A depth-`L` ReLU network equal to the identity on a `k`-planar completely positive set.

    `Omega = {Q c : c in R^k_+}` for a Haar-random orthonormal `Q` `[d, k]`. `O = M Q^T`
    with `M` `[m, k]` non-negative with orthonormal columns (disjoint supports spread over
    the `m = width` neurons), so `O Omega ⊂ R^m_+` and `O^T O = Q Q^T`. Then
    `W_1 = O`, `W_l = P_{Im O} = M M^T`, `W_L = O^T`: the identity on `Omega` with
    `||theta||^2 = L k` (paper 001, Prop 12).

    Args:
        k: dimension of `span Omega`
        d: input dimension (`>= k`)
        depth: `L >= 2`
        width: hidden width `m >= k`
        seed: seed of `Q` and of the supports of `M`.
    Returns:
        An `IdentityConstruction`.
    """
    if not (1 <= k <= d and k <= width and depth >= 2):
        raise ValueError(f"need 1 <= k <= d, k <= width, depth >= 2; got {k}, {d}, {width}")
    rng = np.random.default_rng(seed)
    q, r = np.linalg.qr(rng.standard_normal((d, k)))
    Q = q * np.sign(np.diag(r))
    groups = np.concatenate([np.arange(k), rng.integers(0, k, width - k)])
    rng.shuffle(groups)
    M = np.zeros((width, k))
    M[np.arange(width), groups] = np.abs(rng.standard_normal(width)) + 0.1
    M /= np.linalg.norm(M, axis=0)
    O = M @ Q.T  # [m, d]
    P = M @ M.T  # projection onto Im O, [m, m]
    weights = [O] + [P] * (depth - 2) + [O.T]
    return IdentityConstruction(weights=weights, basis=Q, O=O)


def non_lipschitz_target(X: np.ndarray) -> np.ndarray:
    """A function whose optimal representations are not uniformly Lipschitz as the depth
    grows: `f(x) = (x_1, x_2, x_3 + relu(x_1 - x_2))` on `[0, 1]^3` (paper 001, Example 20;
    `R0 = 3`, `R1 = 0`).

    Args:
        X: `[N, 3]`.
    """
    X = np.asarray(X, dtype=np.float64)
    return np.stack([X[:, 0], X[:, 1], X[:, 2] + np.maximum(X[:, 0] - X[:, 1], 0.0)], axis=1)


def _eps(depth: int, gamma: float) -> float:
    if depth < 4 or depth % 2:
        raise ValueError(f"Example 20 needs an even depth >= 4, got {depth}")
    if not 0.5 < gamma < 1.0:
        raise ValueError(f"gamma must be in (1/2, 1), got {gamma}")
    return depth ** (-gamma)


def non_lipschitz_weights(depth: int, gamma: float) -> list[np.ndarray]:
    """A depth-`L` bias-free ReLU network computing `non_lipschitz_target` with
    `||theta||^2 - 3L -> 0` (paper 001, Example 20, App. D.1).

    `eps = L^{-gamma}`; `diag(e^eps, e^eps, e^{-2 eps})` for `L/2 - 1` layers;
    `[I_3; (c, -c, 0)]` with `c = e^{-(L-2) eps / 2}`; `[I_3 | (0, 0, e^{-(L-2) eps})^T]`;
    `diag(e^{-eps}, e^{-eps}, e^{2 eps})` for `L/2 - 1` layers. Computes
    `non_lipschitz_target` on `[0, 1]^3`.

    Args:
        depth: even `L >= 4`
        gamma: `gamma in (1/2, 1)`.
    Returns:
        `[W_1, ..., W_L]` (float64).
    """
    eps = _eps(depth, gamma)
    half = depth // 2 - 1
    up = np.diag([math.exp(eps), math.exp(eps), math.exp(-2 * eps)])
    down = np.diag([math.exp(-eps), math.exp(-eps), math.exp(2 * eps)])
    c = math.exp(-(depth - 2) * eps / 2)
    split = np.vstack([np.eye(3), [[c, -c, 0.0]]])  # [4, 3]
    merge = np.hstack([np.eye(3), [[0.0], [0.0], [math.exp(-(depth - 2) * eps)]]])  # [3, 4]
    return [up] * half + [split, merge] + [down] * half


def non_lipschitz_norm_sq(depth: int, gamma: float) -> float:
    """Exact `||theta||^2` of `non_lipschitz_weights` (closed form, no sum over layers).

    `(L/2 - 1)(2 e^{2 eps} + e^{-4 eps} + 2 e^{-2 eps} + e^{4 eps}) + 6 + 2 c^2 + c^4`.
    """
    eps = _eps(depth, gamma)
    c2 = math.exp(-(depth - 2) * eps)
    pair = 4 * math.cosh(2 * eps) + 2 * math.cosh(4 * eps)
    return (depth // 2 - 1) * pair + 6.0 + 2 * c2 + c2**2


def non_lipschitz_excess(depth: int, gamma: float) -> float:
    """`||theta||^2 - 3L` of `non_lipschitz_weights` (paper 001, Example 20), from the
    closed form without cancellation.

    `(L/2 - 1)(4 (cosh 2eps - 1) + 2 (cosh 4eps - 1)) + 2 c^2 + c^4`, which is
    `~ 12 L^{1 - 2 gamma} + 2 e^{-(L-2) eps} + e^{-2 (L-2) eps}` (paper 001, App. D.1).
    """
    eps = _eps(depth, gamma)
    c2 = math.exp(-(depth - 2) * eps)
    # cosh(x) - 1 = 2 sinh(x/2)^2, exact for small x
    pair = 8 * math.sinh(eps) ** 2 + 4 * math.sinh(2 * eps) ** 2
    return (depth // 2 - 1) * pair + 2 * c2 + c2**2


def non_lipschitz_table(
    depths: tuple[int, ...] | list[int], gamma: float, X: np.ndarray
) -> list[dict[str, float]]:
    """Example 20's construction checked at each depth (paper 001, App. D.1): its excess
    `||theta||^2 - 3L`, `sum ||W_l||^2` of the built weights against the closed form, and
    `max |f_theta(x) - f(x)|` on the points `X` `[N, 3]` of `[0, 1]^3`.

    Returns:
        One row `{"depth", "excess", "norm_sum", "norm_closed", "f_error"}` per depth.
    """
    rows = []
    for L in depths:
        Ws = non_lipschitz_weights(L, gamma)
        err = np.abs(relu_network(Ws, X) - non_lipschitz_target(X)).max()
        rows.append(
            {
                "depth": L,
                "excess": non_lipschitz_excess(L, gamma),
                "norm_sum": float(sum(np.sum(W**2) for W in Ws)),
                "norm_closed": non_lipschitz_norm_sq(L, gamma),
                "f_error": float(err),
            }
        )
    return rows
