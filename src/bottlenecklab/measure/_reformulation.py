"""Paper 004's reformulations applied to a fully-connected network (float64 copies).

The FCNN's separate bias with `bias_scale = beta` is the spec's last weight column acting on
a constant `beta` column: `W_l = [W | b]` on `Zs_{l-1} = [sigma(Z_{l-1}), beta 1]`.
"""

from __future__ import annotations

import copy
from typing import Any

import torch

from bottlenecklab import theory
from bottlenecklab.measure._coi import as_float64
from bottlenecklab.measure._costs import float64_copy
from bottlenecklab.tasks import COSTS

__all__ = [
    "fcnn_forces",
    "fcnn_layers",
    "fcnn_linear_kernels",
    "fcnn_reformulated_losses",
    "null_norms",
    "null_step_residual",
]


def fcnn_layers(net: Any, X: torch.Tensor) -> tuple[list, list, list]:
    """`(Zs_prev, Z, W)` per layer `l = 1..L` of an FCNN `net` (used as given, so call it on
    a float64 copy): `Zs_{l-1} = [sigma(Z_{l-1}), beta 1]` `[N, n_{l-1}+1]`, `Z_l` `[N, n_l]`,
    `W_l = [W | b]` `[n_l, n_{l-1}+1]`.

    Args:
        net: an `FCNN`
        X: `[N, d_in]` in the net's dtype.
    """
    beta = net.cfg.bias_scale
    pre, post = net.forward_path(X)
    ones = torch.full((X.shape[0], 1), beta, dtype=X.dtype, device=X.device)
    Zs = [torch.cat([a, ones], dim=1) for a in post]
    W = [torch.cat([w, b[:, None]], dim=1) for w, b in zip(net.weights, net.biases)]
    return Zs, list(pre), W


def fcnn_reformulated_losses(
    model: Any, X: Any, Y: Any, lam: float, *, cost: str = "mse", r: float = theory.R_CUTOFF
) -> dict[str, float]:
    """`weight`, `representation`, `covariance` and `null` forms of the loss of an FCNN
    (`theory.reformulated_losses`, paper 004, Prop 1, 3; App B), float64.

    `weight = representation + null` and `representation = covariance` for any weights.

    Args:
        model: an `FCNN`
        X: `[N, d_in]`
        Y: `[N, d_out]`
        lam: `lambda`
        cost: `mse` (the spec's mean cost) or `cross_entropy`
        r: the matched cut-off.
    """
    net = float64_copy(model)
    X64, Y64 = as_float64(X), as_float64(Y)
    with torch.no_grad():
        Zs, Z, W = fcnn_layers(net, X64)
        c = float(COSTS[cost](Z[-1], Y64))
        return theory.reformulated_losses(Zs, Z, W, c, lam, r)


def null_norms(model: Any, X: Any, r: float = theory.R_CUTOFF) -> list[float]:
    """`||W~_l||_F = ||W_l P_perp_l||_F` per layer `l = 1..L` (paper 004, App B), float64.

    Args:
        model: an `FCNN`
        X: `[N, d_in]`.
    """
    net = float64_copy(model)
    with torch.no_grad():
        Zs, _, W = fcnn_layers(net, as_float64(X))
        return [float((w @ theory.null_projector(s, r)).norm()) for s, w in zip(Zs, W)]


def null_step_residual(
    model: Any, X: Any, Y: Any, lam: float, lr: float, *, r: float = theory.R_CUTOFF
) -> float:
    """Largest relative residual of `W_{l,t+1} P_perp_{l,t} = (1 - 2 lr lam) W_{l,t} P_perp_{l,t}`
    after one full-batch GD step on `C + lam ||theta||^2` (derived, spec `l2-sparsity.md`),
    taken on a float64 copy (the caller's network is not changed).

    Args:
        model: an `FCNN`
        X: `[N, d_in]`
        Y: `[N, d_out]` (mean cost); lam
        lr: the step.
    Returns:
        `max_l ||W_{t+1} P - (1 - 2 lr lam) W_t P|| / ||W_t||` over layers.
    """
    net = float64_copy(model)
    X64, Y64 = as_float64(X), as_float64(Y)
    with torch.no_grad():
        Zs, _, W0 = fcnn_layers(net, X64)
        P = [theory.null_projector(s, r) for s in Zs]
    loss = _mse(net, X64, Y64) + net.regularization(lam)
    grads = torch.autograd.grad(loss, list(net.parameters()))
    step = copy.deepcopy(net)
    with torch.no_grad():
        for p, g in zip(step.parameters(), grads):
            p -= lr * g
        _, _, W1 = fcnn_layers(step, X64)
        res = [
            float((w1 @ p - (1 - 2 * lr * lam) * w0 @ p).norm() / w0.norm())
            for w0, w1, p in zip(W0, W1, P)
        ]
    return max(res)


def _mse(net: Any, X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
    """The spec's mean cost `(1/N) ||Y - f(X)||_F^2` of `net` (differentiable)."""
    return COSTS["mse"](net(X), Y)


def fcnn_linear_kernels(model: Any, X: Any) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Measured `K_l = Z_l Z_l^T` and the formula `X M^{l/L} X^T` (`theory.linear_kernels`)
    of a deep linear FCNN (`beta = 0`, `X` square invertible; paper 004, §3.1), float64.

    Args:
        model: a linear `FCNN`
        X: `[N, N]`. Returns `(measured, formula)`, lists of `[N, N]`.
    """
    net = float64_copy(model)
    X64 = as_float64(X)
    with torch.no_grad():
        _, Z, _ = fcnn_layers(net, X64)
        formula = theory.linear_kernels(X64, Z[-1], net.depth)
    return [z @ z.T for z in Z], formula


def fcnn_forces(
    model: Any, X: Any, lam: float, rel: float = 1e-6
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Attraction and repulsion `(A_l, R_l)` `[N, n_l]` on each hidden layer `l = 1..L-1` of an
    FCNN with a (leaky) ReLU (`theory.forces`; paper 004, §3.1), float64.

    Args:
        model: an `FCNN`
        X: `[N, d_in]`
        lam: `lambda`
        rel: ridge `eps / (Tr K^s / N)`.
    """
    net = float64_copy(model)
    with torch.no_grad():
        Zs, Z, _ = fcnn_layers(net, as_float64(X))
        slope = net.cfg.slope if net.cfg.activation == "leaky_relu" else 1.0
        out = []
        for l in range(1, net.depth):
            ds = torch.where(Z[l - 1] > 0, 1.0, slope).to(torch.float64)
            out.append(theory.forces(Zs[l - 1], Z[l - 1], Zs[l], Z[l], ds, lam, rel))
    return out
