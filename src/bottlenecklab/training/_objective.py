"""What a training run minimizes: `C(model(X), Y) + model.regularization(lam)` on the
training set, and the measurements of a metrics row."""

from __future__ import annotations

import math
from typing import Any

import torch

from bottlenecklab.config import ConfigError
from bottlenecklab.tasks import COSTS, Dataset
from bottlenecklab.training._smoothing import SmoothReLU

__all__ = ["DTYPES", "Objective"]

DTYPES = {"float32": torch.float32, "float64": torch.float64}


class Objective:
    """The full-batch training loss of `model` on `data` (moved to `device` and `dtype`).

    Args:
        model: network with `forward`, `regularization(lam)`, `depth`, `adapt_every`.
        data: `x_train` `[N, d_in]`, `y_train` `[N, d_out]` (and the test split, for logs).
        cost: a key of `tasks.COSTS`; lam: the weight decay written out in the loss (the
            trainer sets `lam` to each phase's own, `TrainConfig.lam_of`).

    `smooth` (set by the trainer to each phase's `PhaseConfig.smooth`): when `> 0`, the
    loss is that of the network with softplus-smoothed ReLUs (`SmoothReLU`), through the
    model's `forward_twice_differentiable` where it has one (the leaky ResNets' plain
    loop: their fused stack makes no ReLU call); the metrics rows (`row`) always measure
    the exact network.
    """

    def __init__(
        self, model: torch.nn.Module, data: Dataset, cost: str, lam: float, dtype, device: str
    ) -> None:
        model.to(device=device, dtype=dtype)
        self.model, self.lam, self.cost_fn = model, lam, COSTS[cost]
        self.X, self.Y, self.Xt, self.Yt = (
            torch.as_tensor(a, dtype=dtype, device=device)
            for a in (data.x_train, data.y_train, data.x_test, data.y_test)
        )
        self.params = [p for p in model.parameters() if p.requires_grad]
        self.forward = model  # `TrainConfig.compile` swaps in a compiled forward
        self.smooth = 0.0

    @property
    def n(self) -> int:
        """The number of training samples."""
        return self.X.shape[0]

    def parts(
        self, forward: Any = None, rows: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """`(loss, cost, reg)` at the current parameters (`forward`: another forward of the
        same network, e.g. the twice-differentiable one; `rows`: the cost of these training
        samples only, a mini-batch)."""
        X, Y = (self.X, self.Y) if rows is None else (self.X[rows], self.Y[rows])
        net = self.forward if forward is None else forward
        if self.smooth and forward is None:  # a fused stack makes no ReLU call to smooth
            net = getattr(self.model, "forward_twice_differentiable", None) or net
        if self.smooth:
            with SmoothReLU(self.smooth) as mode:
                out = net(X)
            if not mode.calls:
                raise ConfigError(
                    f"phase smooth = {self.smooth:g}: {type(self.model).__name__} makes no "
                    "relu/leaky_relu call to smooth (a fused stack?); use smooth = 0"
                )
        else:
            out = net(X)
        cost = self.cost_fn(out, Y)
        # lam = 0: no regularizer in the graph (its value and gradient are exact zeros)
        reg = self.model.regularization(self.lam) if self.lam else cost.new_zeros(())
        return cost + reg, cost, reg

    def loss(self, forward: Any = None, rows: torch.Tensor | None = None) -> torch.Tensor:
        return self.parts(forward, rows)[0]

    def row(self, optimizer: str, lr: float) -> dict[str, Any]:
        """The measured part of a metrics row: the `lam` of the loss, its parts, the test
        cost and the gradient norm."""
        for p in self.params:
            p.grad = None
        smooth, self.smooth = self.smooth, 0.0  # the exact network's numbers
        try:
            loss, cost, reg = self.parts()
        finally:
            self.smooth = smooth
        loss.backward()
        grads = [float(p.grad.pow(2).sum()) for p in self.params if p.grad is not None]
        with torch.no_grad():
            test_cost = float(self.cost_fn(self.model(self.Xt), self.Yt))
        return {
            "phase": optimizer,
            "lr": lr,
            "lam": self.lam,
            "loss": float(loss.detach()),
            "cost": float(cost.detach()),
            "reg": float(reg.detach()),
            "test_cost": test_cost,
            "grad_norm": math.sqrt(sum(grads)),
        }
