"""Configuration of full-batch training in phases."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bottlenecklab.config import ConfigError

__all__ = ["PhaseConfig", "TrainConfig"]


@dataclass(frozen=True)
class PhaseConfig:
    """One training phase.

    Args:
        optimizer: the phase kind (`training.PHASES`): `adam`, `sgd` (plain full-batch
            gradient descent, optional momentum), `lbfgs` (strong-Wolfe line search; one
            step = one L-BFGS iteration), `newton` (trust-region Newton with exact
            Hessian-vector products through scipy's trust-krylov on the host, `lr` the
            initial trust radius; one step = one trust-region iteration) or
            `trust_region` (the same outer method in torch with a Lanczos GLTR solver, on the
            training device) or `kink_newton` (Newton-KKT on the kink manifold, the exact
            endgame after a smoothed continuation; `lr` the initial trust radius) or
            `woodbury_newton` (trust-region Newton in the metric of the Gauss-Newton
            matrix, preconditioned by its Woodbury inverse; mean squared error and a
            weight decay on every parameter; `lr` the initial trust radius in that metric).
        steps: number of steps (iterations) of the phase.
        lr: learning rate (divided by the depth when `TrainConfig.lr_per_depth`).
        schedule: `constant` or `cosine` (decay to 0 over the phase).
        momentum: SGD momentum.
        history: L-BFGS history size.
        backtrack: `sgd` only: a step that raises the loss is undone and the learning
            rate halved for the rest of the phase (the papers' "halving the step when the
            loss rises", spec `l2-sparsity.md`, `depth-and-rank.md`).
        lam: the weight decay of this phase's objective (`None`: `TrainConfig.lam`); a
            path of them is a continuation in `lambda` (`training.continuation`). The last
            phase must train at `TrainConfig.lam`, the `lambda` every measurement reads.
        lr_power: `sgd` only: the step is `lr ||theta||^lr_power` at the current
            parameters (paper 003, Sec 2.1: `2 - L` is GD in the time `tau`); `0`: `lr`.
        min_lr: `sgd` only: a floor of that step (`0`: none; with a negative `lr_power` it
            stops the decay once the norm has grown).
        batch_size: `sgd` only: mini-batch SGD on batches of this many training samples, a
            seeded reshuffle of the training set every epoch (`0`: full batch); the order
            and the position in it are part of the checkpoint (bitwise resume).
        seed: `sgd` with `batch_size` only: the seed of the mini-batch order.
        smooth: train this phase on the loss with every ReLU (leaky ReLU) replaced by a
            softplus of sharpness `beta = smooth` (`training.SmoothReLU`; `0`: the exact
            network). A rising path of them is a continuation toward the kinked optimum;
            the last phase must be exact (the network the certificate and claims read).
    """

    optimizer: Literal[
        "adam", "sgd", "lbfgs", "newton", "trust_region", "kink_newton", "woodbury_newton"
    ] = "adam"
    steps: int = 1000
    lr: float = 1e-3
    schedule: Literal["constant", "cosine"] = "constant"
    momentum: float = 0.0
    history: int = 50
    backtrack: bool = False
    lam: float | None = None
    lr_power: float = 0.0
    min_lr: float = 0.0
    batch_size: int = 0
    seed: int = 0
    smooth: float = 0.0

    def __post_init__(self) -> None:
        if not self.smooth >= 0:
            raise ConfigError(f"phase smooth (softplus sharpness) must be >= 0, got {self.smooth}")
        if self.steps < 0:
            raise ConfigError(f"phase steps must be >= 0, got {self.steps}")
        if self.smooth and self.optimizer == "kink_newton":
            raise ConfigError("kink_newton solves the exact (kinked) loss: its smooth must be 0")
        if not self.lr > 0:
            raise ConfigError(f"phase lr must be > 0, got {self.lr}")
        if not 0 <= self.momentum < 1:
            raise ConfigError(f"phase momentum must be in [0, 1), got {self.momentum}")
        if self.history < 1:
            raise ConfigError(f"phase history must be >= 1, got {self.history}")
        if self.backtrack and self.optimizer != "sgd":
            raise ConfigError("phase backtrack is for the sgd optimizer only")
        if self.lam is not None and not self.lam >= 0:
            raise ConfigError(f"phase lam (weight decay) must be >= 0 or None, got {self.lam}")
        if (self.lr_power or self.min_lr or self.batch_size) and self.optimizer != "sgd":
            raise ConfigError("phase lr_power, min_lr and batch_size are for sgd only")
        if not self.min_lr >= 0 or self.batch_size < 0:
            raise ConfigError(
                f"phase min_lr and batch_size must be >= 0, got {self.min_lr}, {self.batch_size}"
            )
        if self.batch_size and self.backtrack:
            raise ConfigError("phase backtrack compares full-batch losses: not with batch_size")


@dataclass(frozen=True)
class TrainConfig:
    """Full-batch training with the model's explicit regularizer.

    Args:
        lam: weight decay `lambda >= 0` (written out in the loss, never the optimizer's):
            that of every phase without its own `PhaseConfig.lam`, and of the last one,
            which the certificate and the claims read.
        cost: the data cost, `mse` (`(1/N)||Y - Y_hat||_F^2`) or `cross_entropy` (mean over
            samples; `Y` one-hot).
        phases: the phases, run in order (e.g. Adam, then SGD; paper 000, App. B).
        lr_per_depth: divide every learning rate by the depth (`lr ~ 1/L`, paper 001).
        dtype: training precision.
        log_every: steps between rows of `metrics.csv`.
        checkpoint_every: steps between checkpoints.
        compile: run the training forward through `torch.compile` (a warning and eager
            training where compilation is unavailable).
        stop_fraction: end training at the first logged step whose loss is at most this
            fraction of the initial loss (the escape from a plateau, paper 003); `0`: never.
    """

    lam: float = 0.002
    cost: Literal["mse", "cross_entropy"] = "mse"
    phases: tuple[PhaseConfig, ...] = (
        PhaseConfig("adam", 20_000, 1e-3),
        PhaseConfig("sgd", 10_000, 1e-4),
    )
    lr_per_depth: bool = False
    dtype: Literal["float32", "float64"] = "float32"
    log_every: int = 100
    checkpoint_every: int = 1000
    compile: bool = False
    stop_fraction: float = 0.0

    def __post_init__(self) -> None:
        if not self.lam >= 0:
            raise ConfigError(f"train.lam (weight decay) must be >= 0, got {self.lam}")
        if not self.phases:
            raise ConfigError("train.phases must have at least one phase")
        if not 0 <= self.stop_fraction < 1:
            raise ConfigError(f"train.stop_fraction must be in [0, 1), got {self.stop_fraction}")
        if self.log_every < 1 or self.checkpoint_every < 1:
            raise ConfigError("train.log_every and train.checkpoint_every must be >= 1")
        last = self.lam_of(self.phases[-1])
        if last != self.lam:
            raise ConfigError(
                f"the last phase trains at lam {last:g}, not train.lam {self.lam:g}: end a "
                "continuation at train.lam (the lambda the certificate and claims read)"
            )

        if self.phases[-1].smooth:
            raise ConfigError(
                "the last phase is smoothed (smooth > 0): end with an exact phase (the network "
                "the certificate and claims read)"
            )
        if self.compile and any(p.smooth for p in self.phases):
            raise ConfigError("train.compile does not support smoothed phases (smooth > 0)")

    def lam_of(self, phase: PhaseConfig) -> float:
        """The weight decay of `phase`'s objective (its own `lam`, else `self.lam`)."""
        return self.lam if phase.lam is None else phase.lam

    @property
    def total_steps(self) -> int:
        return sum(p.steps for p in self.phases)
