"""A compositional target `h o g` with inner dimension 1 on the cube (paper 002, opening
slides): what a kernel method cannot exploit and a deep network can."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from bottlenecklab.config import ConfigError
from bottlenecklab.tasks._dataset import Dataset

__all__ = ["RadialCompositionConfig", "radial_composition"]

# Points of the reference sample on which the target is centred and scaled to variance 1.
_REFERENCE = 10_000


@dataclass(frozen=True)
class RadialCompositionConfig:
    """`y = h(g(x))`, `x ~ U[0, 1]^d`, `g(x) = ||x - 1/2|| / sqrt(d/4)` in `[0, 1]`,
    `h(t) = sum_{m <= modes} m^{-smoothness - 1/2} (a_m cos 2 pi m t + b_m sin 2 pi m t)`.

    With `d = 8`, `sqrt(d/4) = sqrt(2)` (spec: `t = ||x - 1/2|| / sqrt 2`); `smoothness = 1`
    gives the spec's `m^{-3/2}` (`alpha = 2` in the slide's Sobolev counting).

    Args:
        dim: input dimension `d`
        modes: Fourier modes of `h`
        smoothness: decay exponent
            minus one half; n_train, n_test: samples.
        teacher_seed: seed of `a, b ~ N(0, 1)`; `None` uses the run's seed (one target per
            seed).
    """

    dim: int = 8
    modes: int = 64
    smoothness: float = 1.0
    n_train: int = 1024
    n_test: int = 1000
    teacher_seed: int | None = None

    def __post_init__(self) -> None:
        if self.dim < 1 or self.modes < 1:
            raise ConfigError(f"task.dim and task.modes must be >= 1, got {self.dim}, {self.modes}")
        if self.n_train < 2 or self.n_test < 1:
            raise ConfigError(
                f"task.n_train must be >= 2 and task.n_test >= 1, got {self.n_train}, {self.n_test}"
            )

    def build(self, seed: int = 0) -> Dataset:
        """Sample the data set (see `radial_composition`)."""
        return radial_composition(self, seed=seed)


def radial_composition(cfg: RadialCompositionConfig, seed: int = 0) -> Dataset:
    """Sample `x ~ U[0,1]^d`, `y = h(g(x))`, centred and scaled to variance 1 on a
    reference sample of 10 000 points (so every `N` sees the same target).

    Returns a `Dataset` with `x: [N, d]`, `y: [N, 1]`, `k_star = 1`.
    """
    t_rng = np.random.default_rng([cfg.teacher_seed if cfg.teacher_seed is not None else seed, 1])
    m = np.arange(1, cfg.modes + 1)
    a, b = t_rng.standard_normal(cfg.modes), t_rng.standard_normal(cfg.modes)
    amp = m ** (-cfg.smoothness - 0.5)

    def target(x: np.ndarray) -> np.ndarray:
        t = np.linalg.norm(x - 0.5, axis=1) / math.sqrt(cfg.dim / 4)  # [N] in [0, 1]
        phase = 2 * math.pi * np.outer(t, m)  # [N, modes]
        return (np.cos(phase) * a * amp + np.sin(phase) * b * amp).sum(axis=1)

    ref = target(np.random.default_rng([seed, 3]).random((_REFERENCE, cfg.dim)))
    mean, std = float(ref.mean()), float(ref.std())
    rng = np.random.default_rng([seed, 2])
    x = rng.random((cfg.n_train + cfg.n_test, cfg.dim))
    y = ((target(x) - mean) / std)[:, None]
    return Dataset.split(
        x,
        y,
        cfg.n_train,
        k_star=1,
        info={
            "task": "radial_composition",
            "dim": cfg.dim,
            "modes": cfg.modes,
            "smoothness": cfg.smoothness,
            "target_mean": mean,
            "target_std": std,
            "reference_points": _REFERENCE,
        },
    )
