"""Cost of identity and stable rank of a representation (paper 000, §1.4, Prop 1), applied:
float64 on the CPU, floats out. The formulas are `theory`'s (same names)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from bottlenecklab import theory

__all__ = [
    "as_float64",
    "coi_residual",
    "cost_of_identity",
    "features",
    "kernel_norm_sq",
    "stable_rank",
]

features = theory.features


def as_float64(A: Any) -> torch.Tensor:
    """A detached float64 CPU tensor from a tensor or array (never the caller's tensor)."""
    if isinstance(A, torch.Tensor):
        return A.detach().to(device="cpu", dtype=torch.float64)
    return torch.as_tensor(np.asarray(A), dtype=torch.float64)


def kernel_norm_sq(M: Any, S: Any, gamma: float = 0.0) -> float:
    """`||M||^2_{K + gamma I}` with `K = S S^T` (`theory.kernel_norm_sq`), in float64.

    Args:
        M: `[N, w]`
        S: `[N, m]`
        gamma: absolute ridge, `>= 0`.
    """
    return float(theory.kernel_norm_sq(as_float64(M), as_float64(S), float(gamma)))


def cost_of_identity(A: Any, *, gamma: float = 0.0, bias: bool = True) -> float:
    """Cost of identity `||A||^2_{K + gamma I}`, `K = S S^T`, `S = sigma(A)` (paper 000, §1.4).

    Args:
        A: representation `[N, w]` (tensor or array).
        gamma: absolute ridge; `0` gives `||S^+ A||_F^2`, see `coi_residual` for the part of
            `A` outside the range of `S`.
        bias: `True` uses `S = [relu(A), 1]`, `False` the bias-free `S = relu(A)`.
    """
    return float(theory.cost_of_identity(as_float64(A), gamma=float(gamma), bias=bias))


def coi_residual(A: Any, *, bias: bool = True) -> float:
    """Relative part of `A` outside the column space of `S`: `||A - S S^+ A||_F / ||A||_F`
    (`theory.coi_residual`, in float64). Zero when the `gamma = 0` COI is finite."""
    return float(theory.coi_residual(as_float64(A), bias=bias))


def stable_rank(A: Any) -> float:
    """Stable rank `||A||_*^2 / ||A||_F^2` of `A` `[N, w]` (paper 000, Prop 1 lower bound)."""
    return float(theory.stable_rank(as_float64(A)))
