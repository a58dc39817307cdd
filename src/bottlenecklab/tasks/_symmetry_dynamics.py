"""Costs along gradient descent on a symmetric matrix-factorization loss (paper 001 §5,
paper 002 backup slides): a task whose bottleneck rank is 2 by a rotation symmetry."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from bottlenecklab.config import ConfigError
from bottlenecklab.tasks._dataset import Dataset

__all__ = [
    "SymmetryDynamicsConfig",
    "gd_path",
    "symmetry_cost",
    "symmetry_dynamics",
    "symmetry_start",
]


def gd_path(v0: np.ndarray, w: np.ndarray, E: np.ndarray, eta: float, steps: int) -> np.ndarray:
    """Gradient descent `v <- v - eta * 4 (v v^T - w w^T - E) v` on
    `C(v) = ||v v^T - (w w^T + E)||_F^2` (spec `depth-and-rank.md`, Tasks).

    Args:
        v0: starts `[N, d]`
        w: `[d]`
        E: symmetric `[d, d]`
        eta: step
        steps: `T`.
    Returns:
        the path `[N, T + 1, d]` (`v(0)` first).
    """
    M = np.outer(w, w) + E  # [d, d]
    v = np.array(v0, dtype=np.float64)
    out = [v]
    for _ in range(steps):
        vv = (v * v).sum(axis=1, keepdims=True)  # [N, 1]: (v v^T) v = ||v||^2 v
        v = v - eta * 4 * (vv * v - v @ M)
        out.append(v)
    return np.stack(out, axis=1)


def symmetry_cost(path: np.ndarray, w: np.ndarray, E: np.ndarray) -> np.ndarray:
    """`C(v) = ||v v^T - (w w^T + E)||_F^2` for every `v` of `path` `[..., d]` -> `[...]`."""
    M = np.outer(w, w) + E
    vv = (path * path).sum(-1)
    vMv = np.einsum("...i,ij,...j->...", path, M, path)
    return vv**2 - 2 * vMv + float((M * M).sum())


def symmetry_start(
    n: int, w: np.ndarray, rng: np.random.Generator, r_range: tuple[float, float]
) -> np.ndarray:
    """`v(0) = r (cos phi w + sin phi e_perp)`, `r ~ U[r_range]`, `phi ~ U[0, pi]`,
    `e_perp` uniform on the unit sphere of `w^perp` (spec **Decision**). Returns `[n, d]`."""
    d = len(w)
    g = rng.standard_normal((n, d))
    g -= np.outer(g @ w, w)  # project out w
    e_perp = g / np.linalg.norm(g, axis=1, keepdims=True)
    r = rng.uniform(*r_range, n)[:, None]
    phi = rng.uniform(0, math.pi, n)[:, None]
    return r * (np.cos(phi) * w + np.sin(phi) * e_perp)


@dataclass(frozen=True)
class SymmetryDynamicsConfig:
    """Inputs `v(0) in R^d`, targets `(C(v(0)), ..., C(v(T)))` (spec **Decision**).

    Args:
        dim: `d`
        steps: `T`
        eta: `eta_v`
        e_norm: `||E||_F` of the fixed symmetric
            perturbation (`0`: exact rotation symmetry about `w`, bottleneck rank 2);
        r_min: smallest `||v(0)||`.
        r_max: largest `||v(0)||`.
        n_train: training samples.
        n_test: test samples.
        teacher_seed: seed of `w` and `E`; `None` uses the run's seed.
    """

    dim: int = 12
    steps: int = 10
    eta: float = 0.02
    e_norm: float = 0.01
    r_min: float = 0.3
    r_max: float = 1.5
    n_train: int = 512
    n_test: int = 512
    teacher_seed: int | None = None

    def __post_init__(self) -> None:
        if self.dim < 2 or self.steps < 0:
            raise ConfigError(f"task.dim must be >= 2, task.steps >= 0: {self.dim}, {self.steps}")
        if not 0 < self.r_min <= self.r_max or self.e_norm < 0 or not self.eta > 0:
            raise ConfigError("task needs 0 < r_min <= r_max, e_norm >= 0, eta > 0")
        if self.n_train < 2 or self.n_test < 1:
            raise ConfigError("task.n_train must be >= 2 and task.n_test >= 1")

    def build(self, seed: int = 0) -> Dataset:
        """Sample the data set (see `symmetry_dynamics`)."""
        return symmetry_dynamics(self, seed=seed)


def symmetry_dynamics(cfg: SymmetryDynamicsConfig, seed: int = 0) -> Dataset:
    """Draw `w`, `E` (teacher seed), the starts (run seed) and the cost along each path.

    `Dataset.info` records every constant, `w` and `E` (needed by the symmetry
    measurements). Returns `x: [N, d]`, `y: [N, T + 1]`, `k_star = 2` (exact for `E = 0`).
    """
    t_rng = np.random.default_rng([cfg.teacher_seed if cfg.teacher_seed is not None else seed, 5])
    w = t_rng.standard_normal(cfg.dim)
    w /= np.linalg.norm(w)
    A = t_rng.standard_normal((cfg.dim, cfg.dim))
    E = A + A.T
    E *= cfg.e_norm / np.linalg.norm(E)
    rng = np.random.default_rng([seed, 6])
    v0 = symmetry_start(cfg.n_train + cfg.n_test, w, rng, (cfg.r_min, cfg.r_max))
    y = symmetry_cost(gd_path(v0, w, E, cfg.eta, cfg.steps), w, E)  # [N, T + 1]
    return Dataset.split(
        v0,
        y,
        cfg.n_train,
        k_star=2,
        info={
            "task": "symmetry_dynamics",
            "dim": cfg.dim,
            "steps": cfg.steps,
            "eta": cfg.eta,
            "e_norm": cfg.e_norm,
            "r_range": [cfg.r_min, cfg.r_max],
            "phi_range": [0.0, math.pi],
            "w": w.tolist(),
            "E": E.tolist(),
        },
    )
