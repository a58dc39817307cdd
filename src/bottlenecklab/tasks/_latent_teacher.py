"""The latent teacher of paper 001, App. E: inputs on an 8-dimensional manifold, outputs
that depend on 2 of its coordinates (bottleneck rank `k* = 2`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from bottlenecklab.config import ConfigError
from bottlenecklab.tasks._dataset import Dataset

__all__ = ["LatentTeacherConfig", "latent_teacher"]


def _shallow_relu(d_in: int, d_out: int, hidden: int, rng: np.random.Generator):
    """`z -> W_2 relu(W_1 z)` with weights `N(0, 1/fan_in)` (no biases), and its Jacobian."""
    W1 = rng.normal(0, math.sqrt(1.0 / d_in), (hidden, d_in))
    W2 = rng.normal(0, math.sqrt(1.0 / hidden), (d_out, hidden))

    def f(z: np.ndarray) -> np.ndarray:
        return np.maximum(z @ W1.T, 0.0) @ W2.T

    def jac(z: np.ndarray) -> np.ndarray:  # [N, d_out, d_in]
        return np.einsum("oh,nh,hi->noi", W2, (z @ W1.T > 0).astype(float), W1)

    return f, jac


@dataclass(frozen=True)
class LatentTeacherConfig:
    """`z ~ N(0, I_8)`, `x = g(z) in R^20`, `y = h(z_1, z_2) in R^20` (paper 001, App. E).

    `g`, `h`: one-hidden-layer ReLU nets (spec **Decision**), weights `N(0, 1/fan_in)`.
    `g` is checked injective on the samples (Jacobian rank `d_latent` everywhere); `Y` is
    centred (train mean) and scaled to total variance 1 (`(1/N) ||Y||_F^2 = 1` on train).

    Args:
        d_latent: latent dimension (8).
        d_in: input dimension (20).
        d_out: output dimension (20).
        k_star: how many latent coordinates `y` depends on (2).
        hidden: width of `g`, `h` (64).
        n_train: training samples.
        n_test: test samples.
        teacher_seed: seed of `g`, `h` (`None`: the run's).
    """

    d_latent: int = 8
    d_in: int = 20
    d_out: int = 20
    k_star: int = 2
    hidden: int = 64
    n_train: int = 1000
    n_test: int = 1000
    teacher_seed: int | None = 0

    def __post_init__(self) -> None:
        if not 1 <= self.k_star <= self.d_latent <= self.d_in:
            raise ConfigError(
                "task needs 1 <= k_star <= d_latent <= d_in, got "
                f"{self.k_star}, {self.d_latent}, {self.d_in}"
            )
        if self.hidden < self.d_latent or self.d_out < 1:
            raise ConfigError(f"task.hidden must be >= d_latent, got {self.hidden}")
        if self.n_train < 2 or self.n_test < 1:
            raise ConfigError("task.n_train must be >= 2 and task.n_test >= 1")

    def build(self, seed: int = 0) -> Dataset:
        """Sample the data set (see `latent_teacher`)."""
        return latent_teacher(self, seed=seed)


def latent_teacher(cfg: LatentTeacherConfig, seed: int = 0) -> Dataset:
    """Sample the latent teacher task; teacher weights from `cfg.teacher_seed` (or `seed`).

    Returns a `Dataset` with `x: [N, d_in]`, `y: [N, d_out]`, `k_star`, and in `info` the
    constants (dimensions, `g`'s smallest Jacobian rank and singular value over all
    samples, the output scale).

    Raises:
        ValueError: when `g` is not injective on the samples (some Jacobian rank < 8).
    """
    t_rng = np.random.default_rng([cfg.teacher_seed if cfg.teacher_seed is not None else seed, 3])
    g, g_jac = _shallow_relu(cfg.d_latent, cfg.d_in, cfg.hidden, t_rng)
    h, _ = _shallow_relu(cfg.k_star, cfg.d_out, cfg.hidden, t_rng)
    rng = np.random.default_rng([seed, 4])
    z = rng.standard_normal((cfg.n_train + cfg.n_test, cfg.d_latent))
    x, y = g(z), h(z[:, : cfg.k_star])
    s = np.linalg.svd(g_jac(z), compute_uv=False)  # [N, d_latent]
    ranks = np.sum(s > 1e-8 * s[:, :1], axis=1)
    if ranks.min() < cfg.d_latent:
        raise ValueError(f"g is not injective: Jacobian rank {ranks.min()} < {cfg.d_latent}")
    y_tr, y_te = y[: cfg.n_train], y[cfg.n_train :]
    mean = y_tr.mean(axis=0)
    scale = math.sqrt(float(np.sum((y_tr - mean) ** 2)) / cfg.n_train)
    return Dataset(
        x_train=x[: cfg.n_train],
        y_train=(y_tr - mean) / scale,
        x_test=x[cfg.n_train :],
        y_test=(y_te - mean) / scale,
        k_star=cfg.k_star,
        info={
            "task": "latent_teacher",
            "d_latent": cfg.d_latent,
            "d_in": cfg.d_in,
            "d_out": cfg.d_out,
            "k_star": cfg.k_star,
            "hidden": cfg.hidden,
            "g_jacobian_rank_min": int(ranks.min()),
            "g_jacobian_smin": float(s[:, -1].min()),
            "y_scale": scale,
        },
    )
