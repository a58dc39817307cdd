"""How far a trained network is from a critical point of its regularized loss."""

from __future__ import annotations

from typing import Any

import torch

from bottlenecklab.measure._costs import float64_copy
from bottlenecklab.tasks import COSTS, Dataset

__all__ = ["gradient_norm"]


def gradient_norm(model: Any, data: Dataset, lam: float, cost: str = "mse") -> float:
    """`||grad_theta (C(Y_hat) + model.regularization(lam))||` on the training set, float64.

    Zero at a critical point of the training loss (the convergence gate of claims about
    trained networks); `C` is `COSTS[cost]`.
    """
    net = float64_copy(model)
    X = torch.as_tensor(data.x_train, dtype=torch.float64)
    Y = torch.as_tensor(data.y_train, dtype=torch.float64)
    loss = COSTS[cost](net(X), Y) + net.regularization(lam)
    grads = torch.autograd.grad(loss, [p for p in net.parameters() if p.requires_grad])
    return float(torch.sqrt(sum(g.pow(2).sum() for g in grads)))
