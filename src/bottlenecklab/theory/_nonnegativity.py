"""Negative mass of a representation (paper 000, Props 2 and 5: minima are non-negative)."""

from __future__ import annotations

import torch

__all__ = ["negative_mass"]


def negative_mass(A: torch.Tensor) -> torch.Tensor:
    """`(||A||_F^2 - ||relu(A)||_F^2) / ||A||_F^2` of `A` `[N, w]`, a 0-d tensor in `[0, 1]`.

    0 when `A >= 0`.
    """
    a2 = A.pow(2).sum()
    return (a2 - torch.relu(A).pow(2).sum()) / a2.clamp_min(1e-300)
