"""A linear teacher `y = A x` with whitened inputs, for the deep linear checks of paper 001
(§3) and paper 002 (representation geodesics)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bottlenecklab.config import ConfigError
from bottlenecklab.tasks._dataset import Dataset

__all__ = ["LinearTeacherConfig", "linear_teacher"]


@dataclass(frozen=True)
class LinearTeacherConfig:
    """`Y = X A^T` with `X^T X / N = I` and prescribed singular values of `A`.

    Args:
        n_train: `N`.
        n_test: test samples (Gaussian, not whitened).
        d_in: columns of `A` (`[d_out, d_in]`).
        d_out: rows of `A`.
        singular_values: the non-zero singular values of `A` (at most `min(d_in, d_out)`).
        teacher_seed: seed of `A`'s singular vectors.
    """

    n_train: int = 64
    n_test: int = 64
    d_in: int = 6
    d_out: int = 5
    singular_values: tuple[float, ...] = (3.0, 1.5, 0.4)
    teacher_seed: int = 0

    def __post_init__(self) -> None:
        if len(self.singular_values) > min(self.d_in, self.d_out) or self.n_train < self.d_in:
            raise ConfigError(
                "task needs len(singular_values) <= min(d_in, d_out) and n_train >= d_in"
            )

    def build(self, seed: int = 0) -> Dataset:
        """Sample the data set (see `linear_teacher`)."""
        return linear_teacher(self, seed=seed)


def teacher_matrix(cfg: LinearTeacherConfig) -> np.ndarray:
    """`A = U diag(s) V^T`, `[d_out, d_in]`, with Haar-random `U`, `V` from `teacher_seed`."""
    rng = np.random.default_rng([cfg.teacher_seed, 5])
    r = len(cfg.singular_values)
    U, _ = np.linalg.qr(rng.standard_normal((cfg.d_out, r)))
    V, _ = np.linalg.qr(rng.standard_normal((cfg.d_in, r)))
    return (U * np.asarray(cfg.singular_values)) @ V.T


def linear_teacher(cfg: LinearTeacherConfig, seed: int = 0) -> Dataset:
    """Whitened Gaussian inputs (`X^T X / N = I` exactly) and `Y = X A^T`.

    Returns a `Dataset` (`x: [N, d_in]`, `y: [N, d_out]`, `k_star = len(singular_values)`)
    with the teacher matrix `A` in `info["A"]` (nested lists).
    """
    rng = np.random.default_rng([seed, 6])
    Z = rng.standard_normal((cfg.n_train, cfg.d_in))
    Z -= Z.mean(axis=0)
    # whiten: X = Z (Z^T Z / N)^{-1/2}
    evals, evecs = np.linalg.eigh(Z.T @ Z / cfg.n_train)
    X = Z @ (evecs / np.sqrt(evals)) @ evecs.T
    A = teacher_matrix(cfg)
    X_test = rng.standard_normal((cfg.n_test, cfg.d_in))
    return Dataset(
        x_train=X,
        y_train=X @ A.T,
        x_test=X_test,
        y_test=X_test @ A.T,
        k_star=len(cfg.singular_values),
        info={"task": "linear_teacher", "A": A.tolist()},
    )
