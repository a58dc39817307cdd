"""Compositional teacher tasks with a known bottleneck rank (paper 000, App. B)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from bottlenecklab.config import ConfigError
from bottlenecklab.tasks._dataset import Dataset, Standardizer

__all__ = ["TeacherConfig", "compositional_teacher"]


def _mlp_piece(d_in: int, d_out: int, hidden: int, rng: np.random.Generator):
    """A random shallow ReLU net `R^{d_in} -> R^{d_out}` (He-normal weights, small biases)."""
    W1 = rng.normal(0, math.sqrt(2.0 / d_in), (hidden, d_in))
    b1 = rng.normal(0, 0.1, hidden)
    W2 = rng.normal(0, math.sqrt(1.0 / hidden), (d_out, hidden))
    return lambda x: np.maximum(x @ W1.T + b1, 0.0) @ W2.T


def _resnet_piece(d_in: int, d_out: int, hidden: int, rng: np.random.Generator, blocks: int = 3):
    """A random residual net `R^{d_in} -> R^{d_out}`: lift, ReLU residual blocks, project."""
    lift = rng.normal(0, math.sqrt(1.0 / d_in), (hidden, d_in))
    Ws = [
        (
            rng.normal(0, math.sqrt(2.0 / hidden), (hidden, hidden)),
            rng.normal(0, 0.1, hidden),
            rng.normal(0, math.sqrt(1.0 / (hidden * blocks)), (hidden, hidden)),
        )
        for _ in range(blocks)
    ]
    proj = rng.normal(0, math.sqrt(1.0 / hidden), (d_out, hidden))

    def f(x: np.ndarray) -> np.ndarray:
        h = x @ lift.T
        for W1, b, W2 in Ws:
            h = h + np.maximum(h @ W1.T + b, 0.0) @ W2.T
        return h @ proj.T

    return f


@dataclass(frozen=True)
class TeacherConfig:
    """`f* = g_m o ... o g_1` with random pieces `g_i: R^{d_{i-1}} -> R^{d_i}`.

    Args:
        dims: `[d_0, d_1, ..., d_m]`; the bottleneck rank is `min` of the inner dims.
        kind: `mlp` (shallow ReLU pieces) or `resnet` (residual pieces).
        hidden: hidden width of every piece.
        n_train: training samples `N`
        n_test: test samples.
        teacher_seed: seed of the teacher's weights; `None` uses the run's seed.
    """

    dims: tuple[int, ...] = (20, 5, 20)
    kind: Literal["mlp", "resnet"] = "mlp"
    hidden: int = 100
    n_train: int = 1000
    n_test: int = 1000
    teacher_seed: int | None = 0

    def __post_init__(self) -> None:
        if len(self.dims) < 2 or min(self.dims) < 1:
            raise ConfigError(f"task.dims needs >= 2 positive dims, got {list(self.dims)}")
        if self.hidden < 1:
            raise ConfigError(f"task.hidden must be a positive integer, got {self.hidden}")
        if self.n_train < 2 or self.n_test < 1:
            raise ConfigError(
                f"task.n_train must be >= 2 and task.n_test >= 1, got {self.n_train}, {self.n_test}"
            )

    @property
    def k_star(self) -> int:
        """Bottleneck rank `k* = min_i d_i` over the inner dimensions (generically)."""
        inner = self.dims[1:-1] or self.dims
        return int(min(inner))

    def build(self, seed: int = 0) -> Dataset:
        """Sample the data set (see `compositional_teacher`)."""
        return compositional_teacher(self, seed=seed)


def compositional_teacher(cfg: TeacherConfig, seed: int = 0) -> Dataset:
    """Sample `x ~ N(0, I)`, `y = f*(x)`; standardize inputs and outputs on the train split.

    The teacher's weights come from `cfg.teacher_seed` (or `seed`), the samples from `seed`.
    Returns a `Dataset` with `x: [N, d_0]`, `y: [N, d_m]` and `k_star`.
    """
    t_rng = np.random.default_rng([cfg.teacher_seed if cfg.teacher_seed is not None else seed, 1])
    piece = _mlp_piece if cfg.kind == "mlp" else _resnet_piece
    pieces = [piece(a, b, cfg.hidden, t_rng) for a, b in zip(cfg.dims[:-1], cfg.dims[1:])]
    rng = np.random.default_rng([seed, 2])
    x = rng.standard_normal((cfg.n_train + cfg.n_test, cfg.dims[0]))
    y = x
    for g in pieces:
        y = g(y)
    x_tr, x_te = x[: cfg.n_train], x[cfg.n_train :]
    y_tr, y_te = y[: cfg.n_train], y[cfg.n_train :]
    sx, sy = Standardizer.fit(x_tr), Standardizer.fit(y_tr)
    return Dataset(
        x_train=sx(x_tr),
        y_train=sy(y_tr),
        x_test=sx(x_te),
        y_test=sy(y_te),
        k_star=cfg.k_star,
        info={"task": "compositional_teacher", "dims": list(cfg.dims), "kind": cfg.kind},
    )
