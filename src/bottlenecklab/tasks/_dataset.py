"""A supervised data set split into train and test, rows = samples."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

__all__ = ["COSTS", "Dataset", "Standardizer", "cross_entropy_cost", "data_cost"]


@dataclass(frozen=True)
class Dataset:
    """Train/test split (float64 numpy arrays) and what is known about the task.

    Args:
        x_train: `[N, d_in]`
        y_train: `[N, d_out]`
        x_test: `[N_test, d_in]`
        y_test: `[N_test, d_out]`.
        k_star: the task's bottleneck rank, when known.
        info: anything else worth saving with the results (JSON-ready).
    """

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    k_star: int | None = None
    info: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def split(
        cls,
        x: np.ndarray,
        y: np.ndarray,
        n_train: int,
        *,
        k_star: int | None = None,
        info: dict[str, Any] | None = None,
    ) -> Dataset:
        """The first `n_train` rows of `x` `[N, d_in]` and `y` `[N, d_out]` for training,
        the rest for testing."""
        return cls(x[:n_train], y[:n_train], x[n_train:], y[n_train:], k_star, info or {})

    @property
    def d_in(self) -> int:
        return int(self.x_train.shape[1])

    @property
    def d_out(self) -> int:
        return int(self.y_train.shape[1])


@dataclass(frozen=True)
class Standardizer:
    """Per-feature `(x - mean) / std`, fitted on the training set only."""

    mean: np.ndarray
    std: np.ndarray

    @classmethod
    def fit(cls, x: np.ndarray) -> Standardizer:
        std = x.std(axis=0)
        return cls(mean=x.mean(axis=0), std=np.where(std > 0, std, 1.0))

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return (x - self.mean) / self.std


def data_cost(Y_hat: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
    """`C(Y_hat) = (1/N) ||Y - Y_hat||_F^2`: summed over outputs, averaged over samples.

    (PyTorch's `MSELoss` also averages over output dimensions: a factor `d_out` off.)
    `[N, d]` gives a scalar; stacked members `[E, N, d]` give `[E]`.
    """
    return (Y - Y_hat).pow(2).sum(dim=(-2, -1)) / Y.shape[-2]


def cross_entropy_cost(logits: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy `-(1/N) sum_i <Y_i, log softmax(logits_i)>` (spec `README.md`).

    `Y` holds one-hot (or probability) rows, `[N, C]` like the logits, so a classification
    `Dataset` keeps the same shapes as a regression one. `[E, N, C]` stacks give `[E]`.
    """
    return -(Y * torch.log_softmax(logits, dim=-1)).sum(dim=(-2, -1)) / Y.shape[-2]


COSTS: dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "mse": data_cost,
    "cross_entropy": cross_entropy_cost,
}
