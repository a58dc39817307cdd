"""Tasks of paper 004's experiments: a 1-D regression, the bipartite task of Prop 13, a
deep ReLU teacher, a digits subset (spec `l2-sparsity.md`, Quick presets) and the small
random data sets of the loss identities (Gaussian, orthogonal), and given 1-D points
(the counterexample of Prop 19)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from bottlenecklab.config import ConfigError
from bottlenecklab.tasks._dataset import Dataset
from bottlenecklab.tasks._digits import class_balanced_split, digits_arrays

__all__ = [
    "BipartiteTask",
    "DigitsTask",
    "GaussianTask",
    "OrthogonalTask",
    "PointsTask",
    "ReluTeacherTask",
    "SineTask",
]


@dataclass(frozen=True)
class SineTask:
    """`y = sin(freq x)` at `n_train` points `linspace(-1, 1)`; test: `n_test` points of the
    same interval (paper 004, Prop 15 setting).

    Args:
        n_train: `N`
        freq: the frequency
        n_test: dense test grid size.
    """

    n_train: int = 10
    freq: float = 3.0
    n_test: int = 200

    def build(self, seed: int = 0) -> Dataset:
        """The data (deterministic: `seed` is unused). `x` `[N, 1]`, `y` `[N, 1]`."""
        x = np.linspace(-1, 1, self.n_train)[:, None]
        xt = np.linspace(-1, 1, self.n_test)[:, None]
        return Dataset(
            x,
            np.sin(self.freq * x),
            xt,
            np.sin(self.freq * xt),
            info={"task": "sine", "freq": self.freq},
        )


@dataclass(frozen=True)
class BipartiteTask:
    """`X = I_N`, `Y = B_N` (paper 004, Prop 13; `theory.bipartite_target`); the test split
    is the training split.

    Args:
        N: even number of samples.
    """

    N: int = 8

    def __post_init__(self) -> None:
        if self.N < 2 or self.N % 2:
            raise ConfigError(f"task.N must be even and >= 2, got {self.N}")

    def build(self, seed: int = 0) -> Dataset:
        """`X` `[N, N]`, `Y` `[N, N]` (deterministic)."""
        h = self.N // 2
        Y = np.ones((self.N, self.N))
        Y[:h, :h] = Y[h:, h:] = (self.N / 2) * np.eye(h)
        X = np.eye(self.N)
        return Dataset(X, Y, X, Y, info={"task": "bipartite", "N": self.N})


@dataclass(frozen=True)
class ReluTeacherTask:
    """`x ~ N(0, I_{d_0})`, `y = W_m relu(... relu(W_1 x))`: a bias-free ReLU teacher with
    `N(0, 2/fan_in)` weights (paper 004, Fig 2 right).

    Args:
        dims: `(d_0, d_1, ..., d_m)`; n_train, n_test: sample counts;
        teacher_seed: the teacher's weights
        data_seed: the samples (fixed, so that runs
            with different seeds differ only in the network's initialization).
    """

    dims: tuple[int, ...] = (50, 10, 10, 10)
    n_train: int = 500
    n_test: int = 1000
    teacher_seed: int = 0
    data_seed: int = 0

    def build(self, seed: int = 0) -> Dataset:
        """`x` `[n, d_0]`, `y` `[n, d_m]` (`seed` unused: `data_seed` fixes the samples)."""
        t = np.random.default_rng([self.teacher_seed, 4])
        Ws = [
            t.normal(0, math.sqrt(2.0 / a), (b, a)) for a, b in zip(self.dims[:-1], self.dims[1:])
        ]
        x = np.random.default_rng([self.data_seed, 5]).standard_normal(
            (self.n_train + self.n_test, self.dims[0])
        )
        h = x
        for i, W in enumerate(Ws):
            h = h @ W.T
            if i < len(Ws) - 1:
                h = np.maximum(h, 0.0)
        n = self.n_train
        return Dataset(x[:n], h[:n], x[n:], h[n:], info={"task": "relu_teacher"})


@dataclass(frozen=True)
class DigitsTask:
    """A class-balanced subset of scikit-learn's 8x8 digits, pixels `/ 16`, one-hot labels
    over `classes`; test: the rest of those classes (paper 004, Fig 1 and Fig 2 left).

    Args:
        classes: the digits kept (`()`: all ten)
        per_class: training samples per class
        data_seed: the subset's draw (fixed across the runs' seeds).
    """

    classes: tuple[int, ...] = (7, 8, 9)
    per_class: int = 14
    data_seed: int = 0

    def build(self, seed: int = 0) -> Dataset:
        """`x` `[n, 64]` in `[0, 1]`, `y` one-hot `[n, len(classes)]`."""
        pixels, labels = digits_arrays()
        keep = self.classes or tuple(range(10))
        tr, te = class_balanced_split(labels, self.per_class, keep, seed=self.data_seed)
        onehot = (labels[:, None] == np.array(keep)[None, :]).astype(np.float64)
        x = pixels / 16.0
        return Dataset(
            x[tr], onehot[tr], x[te], onehot[te], info={"task": "digits", "classes": list(keep)}
        )


@dataclass(frozen=True)
class GaussianTask:
    """Standard Gaussian `X` `[n_train, d_in]` and `Y` `[n_train, d_out]`, the test split the
    training split (the loss identities of paper 004, Prop 1, 3 are measured on the
    training set only).

    Args:
        n_train: `N`
        d_in: input dimension
        d_out: output dimension.
    """

    n_train: int = 8
    d_in: int = 10
    d_out: int = 3

    def build(self, seed: int = 0) -> Dataset:
        """`X` `[N, d_in]`, `Y` `[N, d_out]` drawn with `seed`."""
        rng = np.random.default_rng(seed)
        X = rng.standard_normal((self.n_train, self.d_in))
        Y = rng.standard_normal((self.n_train, self.d_out))
        return Dataset(X, Y, X, Y, info={"task": "gaussian"})


@dataclass(frozen=True)
class OrthogonalTask:
    """Square inputs `X = sqrt(N) Q` `[N, N]`, `Q` a random orthogonal matrix, Gaussian `Y`
    `[N, d_out]`; the test split is the training split (paper 004, §3.1: a deep linear net
    needs an invertible `X`). Well conditioned: a Gaussian `X` of this size has singular
    values down to ~1e-2, and the linear net's L-BFGS then stalls near gradient norm 1e-5.

    Args:
        n_train: `N` (also the input dimension)
        d_out: output dimension.
    """

    n_train: int = 6
    d_out: int = 4

    def build(self, seed: int = 0) -> Dataset:
        """`X` `[N, N]`, `Y` `[N, d_out]` drawn with `seed`."""
        rng = np.random.default_rng(seed)
        Q, _ = np.linalg.qr(rng.standard_normal((self.n_train, self.n_train)))
        X, Y = np.sqrt(self.n_train) * Q, rng.standard_normal((self.n_train, self.d_out))
        return Dataset(X, Y, X, Y, info={"task": "orthogonal"})


@dataclass(frozen=True)
class PointsTask:
    """Given 1-D training points `(x_i, y_i)`; the test split is the training split (paper
    004, Prop 19: `X = (1, -1)^T`, `Y = (1, 1)^T`).

    Args:
        x: the inputs, one value per sample
        y: the targets, one value per sample.
    """

    x: tuple[float, ...] = (1.0, -1.0)
    y: tuple[float, ...] = (1.0, 1.0)

    def __post_init__(self) -> None:
        if not self.x or len(self.x) != len(self.y):
            raise ConfigError(
                f"task.x and task.y need the same length >= 1, got {self.x}, {self.y}"
            )

    def build(self, seed: int = 0) -> Dataset:
        """`X` `[N, 1]`, `Y` `[N, 1]` (deterministic: `seed` is unused)."""
        X, Y = np.array(self.x, dtype=float)[:, None], np.array(self.y, dtype=float)[:, None]
        return Dataset(X, Y, X, Y, info={"task": "points"})
