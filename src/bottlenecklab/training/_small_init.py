"""Training from small initialization with a norm-dependent learning rate (paper 003).

Plain (mini-batch or full-batch) gradient descent on the data cost alone (no weight
decay), with `eta_k = lr * ||theta_k||^lr_power`: `lr_power = 2 - L` is GD in the time
`tau` of paper 003, Sec 2.1 (the path of `theta / ||theta||` then does not depend on the
init scale), `lr_power = -4` with `lr = 10` is the MNIST schedule of Fig 1 (depth 6).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

import torch

from bottlenecklab.config import ConfigError
from bottlenecklab.tasks import COSTS, Dataset
from bottlenecklab.training._trainer import Bookkeeper

__all__ = ["SmallInitConfig", "SmallInitResult", "scale_to_norm", "train_small_init"]

DTYPES = {"float32": torch.float32, "float64": torch.float64}


@dataclass(frozen=True)
class SmallInitConfig:
    """Gradient descent from a small initialization.

    Args:
        steps: largest number of steps; lr, lr_power: `eta_k = lr ||theta_k||^lr_power`,
            clipped to `[min_lr, max_lr]` (a floor stops the decay of a negative power
            once the norm has grown, e.g. after the escape from the origin).
        init_norm: rescale the initial parameters to this norm (`None`: keep the model's
            own init, e.g. `FCNNConfig(init="normal", init_scale=sigma_0)`); the direction
            is the model's seeded draw, so several scales share one direction.
        batch_size: mini-batch size (`0`: full batch); mini-batches are drawn by a seeded
            reshuffle every epoch.
        cost: data cost (`mse` or `cross_entropy`); dtype: precision.
        log_every: steps between logged losses (full training set).
        svd_every: steps between logs of the `svd_top` largest singular values of every
            layer (`0`: never).
        svd_top: how many of the largest singular values are logged.
        stop_fraction: stop once the logged loss is at most this fraction of the first one
            (`0`: never).
        keep_directions: keep `theta / ||theta||` (flattened) at every logged step.
        seed: seed of the mini-batch order.
    """

    steps: int = 20_000
    lr: float = 0.1
    lr_power: float = 0.0
    max_lr: float = math.inf
    min_lr: float = 0.0
    init_norm: float | None = None
    batch_size: int = 0
    cost: Literal["mse", "cross_entropy"] = "mse"
    dtype: Literal["float32", "float64"] = "float64"
    log_every: int = 10
    svd_every: int = 0
    svd_top: int = 10
    stop_fraction: float = 0.0
    keep_directions: bool = False
    seed: int = 0

    def __post_init__(self) -> None:
        if self.steps < 0 or self.log_every < 1 or self.svd_every < 0:
            raise ConfigError("steps >= 0, log_every >= 1 and svd_every >= 0 are required")
        if not 0 <= self.min_lr <= self.max_lr:
            raise ConfigError(f"need 0 <= min_lr <= max_lr, got {self.min_lr}, {self.max_lr}")
        if not self.lr > 0 or self.batch_size < 0:
            raise ConfigError(
                f"lr must be > 0 and batch_size >= 0, got {self.lr}, {self.batch_size}"
            )


@dataclass
class SmallInitResult:
    """Logged training: `metrics` rows `{step, loss, norm, lr}` (loss on the full training
    set), `spectra` rows `{step, layer, index, value}`, `directions` `[P]` per logged step
    (when kept), and the steps done."""

    metrics: list[dict[str, float]] = field(default_factory=list)
    spectra: list[dict[str, Any]] = field(default_factory=list)
    directions: list[torch.Tensor] = field(default_factory=list)
    steps: int = 0


def _params(model: torch.nn.Module) -> list[torch.nn.Parameter]:
    return [p for p in model.parameters() if p.requires_grad]


def _norm(params: list[torch.Tensor]) -> float:
    return math.sqrt(sum(float(p.detach().pow(2).sum()) for p in params))


def scale_to_norm(model: torch.nn.Module, norm: float) -> None:
    """Rescale every parameter of `model` in place so that `||theta|| = norm`."""
    params = _params(model)
    c = norm / _norm(params)
    with torch.no_grad():
        for p in params:
            p.mul_(c)


def train_small_init(
    model: torch.nn.Module, data: Dataset, cfg: SmallInitConfig, *, device: str = "cpu"
) -> SmallInitResult:
    """Train `model` (a bias-free `FCNN`) on `data.x_train` `[N, d_in]` -> `data.y_train`
    `[N, d_out]` by GD with `eta_k = lr ||theta_k||^lr_power` (paper 003, Sec 2.1 and
    Fig 1). The model is moved to `cfg.dtype` in place (it is the network being trained)."""
    dtype = DTYPES[cfg.dtype]
    model.to(device=device, dtype=dtype)
    X = torch.as_tensor(data.x_train, dtype=dtype, device=device)
    Y = torch.as_tensor(data.y_train, dtype=dtype, device=device)
    params = _params(model)
    if cfg.init_norm is not None:
        scale_to_norm(model, cfg.init_norm)
    cost = COSTS[cfg.cost]
    gen = torch.Generator().manual_seed(cfg.seed)
    N = X.shape[0]
    order = torch.randperm(N, generator=gen)
    pos = 0
    book = Bookkeeper(model, total=cfg.steps, log_every=cfg.log_every)  # rows, no checkpoints
    book.start()
    out = SmallInitResult(metrics=book.result.metrics)
    first = math.nan

    def log(step: int) -> float:
        with torch.no_grad():
            loss = float(cost(model(X), Y))
        n = _norm(params)
        book.log({"step": step, "loss": loss, "norm": n, "lr": _lr(n)})
        if cfg.keep_directions:
            out.directions.append(torch.cat([p.detach().flatten() for p in params]) / n)
        return loss

    def _lr(n: float) -> float:
        return min(max(cfg.lr * n**cfg.lr_power, cfg.min_lr), cfg.max_lr)

    def log_svd(step: int) -> None:
        for l, W in enumerate(model.weights, start=1):
            s = torch.linalg.svdvals(W.detach().to(torch.float64).cpu())[: cfg.svd_top]
            out.spectra += [
                {"step": step, "layer": l, "index": i, "value": float(v)}
                for i, v in enumerate(s, start=1)
            ]

    for k in range(cfg.steps + 1):
        if book.due(k, k == cfg.steps):
            loss = log(k)
            first = loss if k == 0 else first
            if not math.isfinite(loss):
                break
            if cfg.stop_fraction > 0 and loss <= cfg.stop_fraction * first:
                break
        if cfg.svd_every and k % cfg.svd_every == 0:
            log_svd(k)
        if k == cfg.steps:
            break
        if cfg.batch_size:
            if pos + cfg.batch_size > N:
                order, pos = torch.randperm(N, generator=gen), 0
            idx = order[pos : pos + cfg.batch_size]
            pos += cfg.batch_size
            xb, yb = X[idx], Y[idx]
        else:
            xb, yb = X, Y
        eta = _lr(_norm(params))
        loss_b = cost(model(xb), yb)
        grads = torch.autograd.grad(loss_b, params)
        with torch.no_grad():
            for p, g in zip(params, grads):
                p.sub_(eta * g)
        book.tick(1)
        out.steps = book.result.steps
    book.bar.close()
    return out
