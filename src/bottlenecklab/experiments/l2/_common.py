"""Shared pieces of the paper-004 experiments: Gaussian data sets and the worst of a list."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from bottlenecklab.tasks import Dataset

__all__ = ["gaussian_data", "orthogonal_data", "worst"]


def gaussian_data(n: int, d_in: int, d_out: int, seed: int) -> Dataset:
    """`X` `[n, d_in]`, `Y` `[n, d_out]` standard Gaussian (the test split is the train split:
    these experiments measure identities on the training set only)."""
    rng = np.random.default_rng(seed)
    X, Y = rng.standard_normal((n, d_in)), rng.standard_normal((n, d_out))
    return Dataset(X, Y, X, Y)


def orthogonal_data(n: int, d_out: int, seed: int) -> Dataset:
    """Square inputs `X = sqrt(n) Q` `[n, n]`, `Q` a random orthogonal matrix (well
    conditioned: a Gaussian `X` of this size has singular values down to ~1e-2, and the
    linear net's L-BFGS then stalls near gradient norm 1e-5), Gaussian `Y` `[n, d_out]`."""
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    X, Y = np.sqrt(n) * Q, rng.standard_normal((n, d_out))
    return Dataset(X, Y, X, Y)


def worst(values: Sequence[float]) -> float:
    """The largest value; `nan` for no values or a `nan` among them (fails every claim)."""
    vals = [float(v) for v in values]
    return max(vals) if vals and all(math.isfinite(v) for v in vals) else math.nan
