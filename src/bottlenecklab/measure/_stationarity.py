"""How far a trained network is from a critical point of its regularized loss, and the
quantities it writes: the regularized training loss (`LOSS`) and its gradient's norm
(`GRAD_NORM`), columns of several experiments."""

from __future__ import annotations

from typing import Any

import torch

from bottlenecklab.measure._costs import float64_copy
from bottlenecklab.measure._quantity import Quantity
from bottlenecklab.tasks import COSTS

__all__ = ["GRAD_NORM", "LOSS", "gradient_norm", "regularized_loss"]


def gradient_norm(model: Any, X: Any, Y: Any, lam: float, cost: str = "mse") -> float:
    """`||grad_theta (C(f(X), Y) + R)||` on a float64 copy: zero at a critical point of the
    regularized training loss (the convergence gate of claims about trained networks).

    `regularized_loss(...)[GRAD_NORM.name]`: `C` is `COSTS[cost]`, `R` the model's
    `regularization(lam)` (each paper's own term), else `lam ||theta||^2`.

    Args:
        model: any `nn.Module` `[N, ...] -> [N, d_out]`
        X: inputs `[N, ...]`
        Y: targets `[N, d_out]` (one-hot rows for `cross_entropy`)
        lam: `lambda`
        cost: a `COSTS` key.
    """
    return regularized_loss(model, X, Y, lam, cost)[GRAD_NORM.name]


def regularized_loss(model: Any, X: Any, Y: Any, lam: float, cost: str = "mse") -> dict[str, float]:
    """The regularized training loss of any network and the norm of its gradient, float64.

    `cost` = `COSTS[cost](f(X), Y)`; `regularization` = `model.regularization(lam)` for
    our models (each paper's own term), else `lam ||theta||^2` over every trainable
    parameter, biases included (spec README: the fully-connected papers' convention).

    Args:
        model: any `nn.Module` `[N, ...] -> [N, d_out]`; X: inputs; Y: targets `[N, d_out]`
            (one-hot rows for `cross_entropy`); lam: `lambda`; cost: a `COSTS` key.
    Returns:
        `cost`, `regularization`, `loss` (`LOSS`) and `grad_norm` (`GRAD_NORM`,
        `||grad_theta loss||`).
    """
    net = float64_copy(model)
    X = torch.as_tensor(X, dtype=torch.float64)
    Y = torch.as_tensor(Y, dtype=torch.float64)
    params = [p for p in net.parameters() if p.requires_grad]
    C = COSTS[cost](net(X), Y)
    if hasattr(net, "regularization"):
        R = net.regularization(lam)
    else:
        R = lam * sum(p.pow(2).sum() for p in params)
    loss = C + R
    grads = torch.autograd.grad(loss, params)
    return {
        "cost": float(C.detach()),
        "regularization": float(R.detach()),
        LOSS.name: float(loss.detach()),
        GRAD_NORM.name: float(torch.sqrt(sum(g.pow(2).sum() for g in grads))),
    }


_NET = "a trained network on its training set (float64 copy)"
LOSS = Quantity(
    "loss",
    "the regularized training loss C_train + R(theta): the model's `regularization(lam)`, "
    "lam ||theta||^2 for an FCNN (paper 004, Fig 2's train loss)",
    function=regularized_loss,
    over=_NET,
    units="the cost's units",
)
GRAD_NORM = Quantity(
    "grad_norm",
    "||grad_theta (C_train + R)||, zero at a critical point of the regularized training "
    "loss (the plain stationarity; the certificate at kinks is `certify`)",
    function=gradient_norm,
    over=_NET,
    units="the loss's units per parameter unit",
)
