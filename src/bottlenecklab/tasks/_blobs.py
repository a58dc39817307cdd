"""Gaussian blobs, one class each (paper 002, slide 'Implications: Classification')."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bottlenecklab.config import ConfigError
from bottlenecklab.tasks._dataset import Dataset

__all__ = ["BlobsConfig", "gaussian_blobs"]


@dataclass(frozen=True)
class BlobsConfig:
    """One isotropic Gaussian blob per class; targets one-hot (cross-entropy).

    Args:
        centers: class centres (each of the same dimension)
        sigma: blob std.
        n_per_class: training points per class
        n_test_per_class: test points per class.
    """

    centers: tuple[tuple[float, ...], ...] = ((1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0))
    sigma: float = 0.3
    n_per_class: int = 100
    n_test_per_class: int = 100

    def __post_init__(self) -> None:
        if len(self.centers) < 2 or len({len(c) for c in self.centers}) != 1:
            raise ConfigError("task.centers needs >= 2 centres of one dimension")
        if not self.sigma > 0 or self.n_per_class < 1 or self.n_test_per_class < 1:
            raise ConfigError("task.sigma must be > 0 and the class sizes >= 1")

    def build(self, seed: int = 0) -> Dataset:
        """Sample the data set (see `gaussian_blobs`)."""
        return gaussian_blobs(self, seed=seed)


def gaussian_blobs(cfg: BlobsConfig, seed: int = 0) -> Dataset:
    """`x = c_k + sigma z`, `z ~ N(0, I)`, label `k` one-hot, classes in blocks.

    Returns a `Dataset` with `x: [K n, d]`, `y: [K n, K]` (one-hot rows).
    """
    rng = np.random.default_rng([seed, 4])
    centers = np.asarray(cfg.centers, dtype=np.float64)  # [K, d]
    k = len(centers)

    def sample(n: int) -> tuple[np.ndarray, np.ndarray]:
        labels = np.repeat(np.arange(k), n)
        x = centers[labels] + cfg.sigma * rng.standard_normal((k * n, centers.shape[1]))
        return x, np.eye(k)[labels]

    x_tr, y_tr = sample(cfg.n_per_class)
    x_te, y_te = sample(cfg.n_test_per_class)
    return Dataset(
        x_train=x_tr,
        y_train=y_tr,
        x_test=x_te,
        y_test=y_te,
        info={"task": "gaussian_blobs", "centers": centers.tolist(), "sigma": cfg.sigma},
    )
