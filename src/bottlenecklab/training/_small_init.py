"""Training from small initialization with a norm-dependent learning rate (paper 003).

Plain (mini-batch or full-batch) gradient descent on the data cost alone (no weight
decay), with `eta_k = lr * ||theta_k||^lr_power`: `lr_power = 2 - L` is GD in the time
`tau` of paper 003, Sec 2.1 (the path of `theta / ||theta||` then does not depend on the
init scale), `lr_power = -4` with `lr = 10` is the MNIST schedule of Fig 1 (depth 6).
`train_small_init` is a thin wrapper: one `sgd` phase of `train` (`PhaseConfig.lr_power`,
`min_lr`, `batch_size`), with step 0, the norm and the directions logged beside it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import torch

from bottlenecklab.config import ConfigError
from bottlenecklab.tasks import Dataset
from bottlenecklab.training._config import PhaseConfig, TrainConfig
from bottlenecklab.training._objective import DTYPES, Objective
from bottlenecklab.training._trainer import TrainingDiverged, train

__all__ = ["SmallInitConfig", "SmallInitResult", "scale_to_norm", "train_small_init"]


@dataclass(frozen=True)
class SmallInitConfig:
    """Gradient descent from a small initialization.

    Args:
        steps: largest number of steps; lr, lr_power: `eta_k = lr ||theta_k||^lr_power`,
            at least `min_lr` (a floor stops the decay of a negative power once the norm
            has grown, e.g. after the escape from the origin).
        init_norm: rescale the initial parameters to this norm (`None`: keep the model's
            own init, e.g. `FCNNConfig(init="normal", init_scale=sigma_0)`); the direction
            is the model's seeded draw, so several scales share one direction.
        batch_size: mini-batch size (`0`: full batch); mini-batches are drawn by a seeded
            reshuffle every epoch.
        cost: data cost (`mse` or `cross_entropy`); dtype: precision.
        log_every: steps between logged losses (full training set).
        stop_fraction: stop once the logged loss is at most this fraction of the first one
            (`0`: never).
        keep_directions: keep `theta / ||theta||` (flattened) at every logged step.
        seed: seed of the mini-batch order.
    """

    steps: int = 20_000
    lr: float = 0.1
    lr_power: float = 0.0
    min_lr: float = 0.0
    init_norm: float | None = None
    batch_size: int = 0
    cost: Literal["mse", "cross_entropy"] = "mse"
    dtype: Literal["float32", "float64"] = "float64"
    log_every: int = 10
    stop_fraction: float = 0.0
    keep_directions: bool = False
    seed: int = 0

    def __post_init__(self) -> None:
        if self.steps < 0 or self.log_every < 1:
            raise ConfigError("steps >= 0 and log_every >= 1 are required")
        if not self.min_lr >= 0:
            raise ConfigError(f"need min_lr >= 0, got {self.min_lr}")
        if not self.lr > 0 or self.batch_size < 0:
            raise ConfigError(
                f"lr must be > 0 and batch_size >= 0, got {self.lr}, {self.batch_size}"
            )

    def train_config(self) -> TrainConfig:
        """The same run as a `TrainConfig`: one `sgd` phase, no weight decay."""
        phase = PhaseConfig(
            "sgd",
            self.steps,
            self.lr,
            lr_power=self.lr_power,
            min_lr=self.min_lr,
            batch_size=self.batch_size,
            seed=self.seed,
        )
        return TrainConfig(
            lam=0.0,
            cost=self.cost,
            phases=(phase,),
            dtype=self.dtype,
            log_every=self.log_every,
            stop_fraction=self.stop_fraction,
        )


@dataclass
class SmallInitResult:
    """Logged training: `metrics` rows `{step, loss, norm, lr}` (loss on the full training
    set, `lr` the rule's step at that norm), `directions` `[P]` per logged step (when
    kept), and the steps done."""

    metrics: list[dict[str, float]] = field(default_factory=list)
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
    Fig 1) through `train` (`cfg.train_config()`). The model is moved to `cfg.dtype` in
    place (it is the network being trained); a NaN/Inf loss ends the run at the last
    logged good state."""
    obj = Objective(model, data, cfg.cost, 0.0, DTYPES[cfg.dtype], device)
    params = _params(model)
    if cfg.init_norm is not None:
        scale_to_norm(model, cfg.init_norm)
    out = SmallInitResult()

    def on_log(row: dict[str, float]) -> None:
        n = _norm(params)
        lr = max(cfg.lr * n**cfg.lr_power, cfg.min_lr)
        out.metrics.append({"step": row["step"], "loss": row["loss"], "norm": n, "lr": lr})
        if cfg.keep_directions:
            out.directions.append(torch.cat([p.detach().flatten() for p in params]) / n)

    with torch.no_grad():
        on_log({"step": 0, "loss": float(obj.loss())})
    try:
        out.steps = train(model, data, cfg.train_config(), device=device, progress=False,
                          on_log=on_log).steps  # fmt: skip
    except TrainingDiverged:
        out.steps = int(out.metrics[-1]["step"])
    return out
