"""Escape directions of a bias-free ReLU network at the origin (paper 003, Sec 2).

Weights of `R` networks are batched as one tensor program: layer `l` is `[R, n_l, n_{l-1}]`
(float64). The localized loss is `L_0(theta) = <G, Y_theta>` with `G = grad C(0)`; an
escape direction is a minimizer of `L_0` on the sphere `||theta||^2 = L` (paper 003,
Def 2.1), found by projected gradient descent with many restarts at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

__all__ = [
    "EscapeResult",
    "cost_gradient_at_zero",
    "escape_directions",
    "forward_batched",
    "linear_escape_speed",
    "localized_loss",
]

Weights = list[torch.Tensor]  # layer l: [R, n_l, n_{l-1}]


def cost_gradient_at_zero(Y: torch.Tensor, cost: str = "mse") -> torch.Tensor:
    """`G = grad C(Y_hat)` at `Y_hat = 0` (paper 003, Sec 2; spec `saddles.md`).

    Args:
        Y: targets `[N, d_out]` (one-hot rows for `cross_entropy`).
        cost: `mse` for `(1/N)||Y - Y_hat||_F^2` (`G = -(2/N) Y`) or `cross_entropy` for
            the mean cross-entropy (`G = (softmax(0) - Y) / N = (1/d_out - Y) / N`).
    Returns:
        `G` `[N, d_out]`.
    """
    N, d = Y.shape
    if cost == "mse":
        return -(2.0 / N) * Y
    if cost == "cross_entropy":
        return (torch.full_like(Y, 1.0 / d) - Y) / N
    raise ValueError(f"cost must be 'mse' or 'cross_entropy', got {cost!r}")


def forward_batched(
    X: torch.Tensor, Ws: Sequence[torch.Tensor], *, linear: bool = False
) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Pre-activations `[Z_1..Z_L]` and activations `[Z^s_0 = X, Z^s_1..Z^s_{L-1}]`.

    `Z_l = Z^s_{l-1} W_l^T`, `Z^s_l = relu(Z_l)` (identity when `linear`); `relu'(0) = 0`
    (torch's). Args: `X` `[N, d_in]`; `Ws[l]` `[R, n_l, n_{l-1}]` (or unbatched
    `[n_l, n_{l-1}]`). Returns tensors `[R, N, n_l]` (`[N, n_l]` unbatched).
    """
    pre, post = [], [X]
    a = X
    for l, W in enumerate(Ws):
        z = a @ W.mT
        pre.append(z)
        if l < len(Ws) - 1:
            a = z if linear else torch.relu(z)
            post.append(a)
    return pre, post


def localized_loss(
    X: torch.Tensor, G: torch.Tensor, Ws: Sequence[torch.Tensor], *, linear: bool = False
) -> torch.Tensor:
    """`L_0(theta) = <G, Y_theta>` (paper 003, Sec 2), homogeneous of degree `L`.

    Args: `X` `[N, d_in]`, `G` `[N, d_out]`, `Ws[l]` `[R, n_l, n_{l-1}]` (or unbatched).
    Returns `[R]` (a scalar unbatched).
    """
    Y = forward_batched(X, Ws, linear=linear)[0][-1]
    return (G * Y).sum(dim=(-2, -1))


def _norm_sq(Ws: Sequence[torch.Tensor]) -> torch.Tensor:
    return sum(W.pow(2).sum(dim=(-2, -1)) for W in Ws)


def _layer_unit(shape: tuple[int, ...], gen: torch.Generator) -> torch.Tensor:
    W = torch.randn(shape, generator=gen, dtype=torch.float64)
    return W / W.pow(2).sum(dim=(-2, -1), keepdim=True).sqrt()


@dataclass(frozen=True)
class EscapeResult:
    """Escape directions of `R` restarts (paper 003, Def 2.1).

    Args:
        weights: `[R, n_l, n_{l-1}]` per layer, each restart on `||theta||^2 = L`.
        speed: `s = -L_0(rho)` `[R]`.
        kkt: `||grad L_0(rho) + s rho||` `[R]` (report only: 0 at a smooth critical
            point, not at the ReLU kinks where the circle optima sit).
        layer_norms: `||W_l||_F` `[R, L]`.
        dead_starts: starts redrawn because `L_0 = 0` with zero gradient.
        history: best speed over restarts, every `history_every` steps.
    """

    weights: Weights
    speed: torch.Tensor
    kkt: torch.Tensor
    layer_norms: torch.Tensor
    dead_starts: int
    history: list[float]

    def singular_values(self, r: int) -> list[torch.Tensor]:
        """Singular values of every layer of restart `r`, `[min(n_l, n_{l-1})]` each."""
        return [torch.linalg.svdvals(W[r]) for W in self.weights]

    def best(self) -> int:
        """Index of the fastest restart."""
        return int(torch.argmax(self.speed))


def _grad(X, G, Ws, linear):
    Ws = [W.detach().requires_grad_(True) for W in Ws]
    loss = localized_loss(X, G, Ws, linear=linear)
    grads = torch.autograd.grad(loss.sum(), Ws)
    return loss.detach(), [g.detach() for g in grads]


def _dead(X, G, Ws, linear) -> torch.Tensor:
    loss, grads = _grad(X, G, Ws, linear)
    gnorm = _norm_sq(grads)
    return (loss == 0) & (gnorm == 0)


def escape_directions(
    X: torch.Tensor,
    G: torch.Tensor,
    widths: Sequence[int],
    *,
    restarts: int,
    steps: int,
    lr: float = 0.05,
    lr_end: float = 1e-4,
    seed: int = 0,
    linear: bool = False,
    init: Weights | None = None,
    max_redraws: int = 100,
    history_every: int = 50,
) -> EscapeResult:
    """Minimize `L_0` on `||theta||^2 = L` by projected GD, `R` restarts at once.

    Every layer starts at Frobenius norm 1 (so `||theta||^2 = L`); starts with `L_0 = 0`
    and zero gradient are redrawn and counted. Step `k` moves by `lr_k` along the
    normalized tangent gradient (`g - <g, theta> theta / L`), `lr_k` decaying
    geometrically from `lr` to `lr_end`, then renormalizes onto the sphere (paper 003,
    Def 2.1; spec `saddles.md`, escape-direction solver).

    Args:
        X: inputs `[N, d_in]`
        G: `grad C(0)` `[N, d_out]` (float64).
        widths: hidden widths `[n_1..n_{L-1}]` (empty: `L = 1`).
        restarts: `R`
        steps: GD steps; lr, lr_end: first and last normalized step.
        seed: seeds the starts
        linear: identity activation (deep linear baseline).
        init: warm starts, `[R, n_l, n_{l-1}]` per layer (rescaled onto the sphere).
    """
    X, G = X.to(torch.float64), G.to(torch.float64)
    sizes = [X.shape[1], *widths, G.shape[1]]
    L = len(sizes) - 1
    gen = torch.Generator().manual_seed(seed)
    dead = 0
    if init is None:
        shapes = [(restarts, n, m) for m, n in zip(sizes[:-1], sizes[1:])]
        Ws = [_layer_unit(s, gen) for s in shapes]
        for _ in range(max_redraws):
            mask = _dead(X, G, Ws, linear)
            if not bool(mask.any()):
                break
            dead += int(mask.sum())
            Ws = [torch.where(mask[:, None, None], _layer_unit(W.shape, gen), W) for W in Ws]
    else:
        Ws = [W.detach().to(torch.float64).clone() for W in init]
        c = (L / _norm_sq(Ws)).sqrt()
        Ws = [W * c[:, None, None] for W in Ws]
    history: list[float] = []
    ratio = (lr_end / lr) ** (1.0 / max(1, steps - 1))
    for k in range(steps):
        loss, grads = _grad(X, G, Ws, linear)
        if k % history_every == 0:
            history.append(float((-loss).max()))
        radial = sum((g * W).sum(dim=(-2, -1)) for g, W in zip(grads, Ws)) / L  # [R]
        tang = [g - radial[:, None, None] * W for g, W in zip(grads, Ws)]
        tnorm = _norm_sq(tang).sqrt()
        step = (lr * ratio**k) / torch.where(tnorm > 0, tnorm, torch.ones_like(tnorm))
        Ws = [W - step[:, None, None] * t for W, t in zip(Ws, tang)]
        c = (L / _norm_sq(Ws)).sqrt()
        Ws = [W * c[:, None, None] for W in Ws]
    loss, grads = _grad(X, G, Ws, linear)
    speed = -loss
    kkt = _norm_sq([g + speed[:, None, None] * W for g, W in zip(grads, Ws)]).sqrt()
    norms = torch.stack([W.pow(2).sum(dim=(-2, -1)).sqrt() for W in Ws], dim=1)
    history.append(float(speed.max()))
    return EscapeResult(Ws, speed, kkt, norms, dead, history)


def linear_escape_speed(X: torch.Tensor, G: torch.Tensor, depth: int) -> float:
    """Optimal escape speed of a deep *linear* net (derived, not in paper 003).

    `s* = sigma_1(G^T X)` for `L >= 2` (a product of unit-Frobenius factors has nuclear
    norm at most 1), `||G^T X||_F` for `L = 1`. Args: `X` `[N, d_in]`, `G` `[N, d_out]`.
    """
    M = (G.mT @ X).to(torch.float64)
    if depth == 1:
        return float(torch.linalg.matrix_norm(M))
    if depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth}")
    return float(torch.linalg.matrix_norm(M, ord=2))
