"""A ball on the torus falling under gravity, seen as frames (paper 002, slide 'Learning
Newtonian Mechanics'): predict the next frame from the last two."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bottlenecklab.config import ConfigError
from bottlenecklab.tasks._dataset import Dataset

__all__ = ["BallGravityConfig", "ball_frames", "ball_gravity"]


def ball_frames(p: np.ndarray, n: int, sigma: float) -> np.ndarray:
    """Frames `exp(-d(x, p)^2 / (2 sigma^2))` on the `n x n` torus (`d`: torus distance).

    Args:
        p: positions `[..., 2]` (pixel units, any real numbers).
    Returns:
        `[..., n, n]` (axis `-2` is coordinate 0).
    """
    grid = np.arange(n, dtype=np.float64)
    diff = [np.abs(grid - p[..., j, None]) % n for j in range(2)]  # 2 x [..., n]
    d = [np.minimum(a, n - a) for a in diff]
    sq = d[0][..., :, None] ** 2 + d[1][..., None, :] ** 2  # [..., n, n]
    return np.exp(-sq / (2 * sigma**2))


@dataclass(frozen=True)
class BallGravityConfig:
    """Inputs: the frames at `p - v` and `p` (2 channels); target: the frame at
    `p + v + g` (`g` along axis 0); `p` uniform on the torus, `v ~ U[-v_max, v_max]^2`.

    Args:
        size: `n`
        sigma: `sigma_b` (pixels)
        v_max: largest speed per axis (pixel/step)
        gravity: `g` (pixel/step^2); n_train, n_test: samples.

    Rows are flattened (spec convention): `x` `[N, 2 n^2]` (channel-major), `y` `[N, n^2]`.
    All frames share one scale so that the target's total variance is 1.
    """

    size: int = 16
    sigma: float = 1.5
    v_max: float = 1.5
    gravity: float = 0.2
    n_train: int = 1024
    n_test: int = 256

    def __post_init__(self) -> None:
        if self.size < 4 or not self.sigma > 0 or self.v_max < 0:
            raise ConfigError("task.size must be >= 4, task.sigma > 0, task.v_max >= 0")
        if self.n_train < 2 or self.n_test < 1:
            raise ConfigError("task.n_train must be >= 2 and task.n_test >= 1")

    def build(self, seed: int = 0) -> Dataset:
        """Sample the data set (see `ball_gravity`)."""
        return ball_gravity(self, seed=seed)


def ball_gravity(cfg: BallGravityConfig, seed: int = 0) -> Dataset:
    """Sample positions and velocities; frames scaled so the target's total variance
    (sum over pixels of the per-pixel variance, on the training set) is 1.

    `info` holds the scale, the constants and the test positions/velocities (for
    rollouts: the next state is `p' = p + v + g`, `v' = v + g`).
    """
    rng = np.random.default_rng([seed, 7])
    N = cfg.n_train + cfg.n_test
    n = cfg.size
    p = rng.uniform(0, n, (N, 2))
    v = rng.uniform(-cfg.v_max, cfg.v_max, (N, 2))
    g = np.array([cfg.gravity, 0.0])
    frames = ball_frames(np.stack([p - v, p, p + v + g], axis=1), n, cfg.sigma)  # [N, 3, n, n]
    scale = 1.0 / np.sqrt(frames[: cfg.n_train, 2].reshape(cfg.n_train, -1).var(axis=0).sum())
    frames *= scale
    x = frames[:, :2].reshape(N, 2 * n * n)
    y = frames[:, 2].reshape(N, n * n)
    return Dataset.split(
        x,
        y,
        cfg.n_train,
        info={
            "task": "ball_gravity",
            "size": n,
            "sigma": cfg.sigma,
            "v_max": cfg.v_max,
            "gravity": cfg.gravity,
            "scale": float(scale),
            "test_p": p[cfg.n_train :].tolist(),
            "test_v": v[cfg.n_train :].tolist(),
        },
    )
