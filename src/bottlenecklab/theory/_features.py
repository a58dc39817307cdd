"""The feature map of the leaky ResNet (paper 000, §1): one implementation for the whole
library (models, theory and measure all use it)."""

from __future__ import annotations

import torch

__all__ = ["features", "sigma"]


def sigma(A: torch.Tensor) -> torch.Tensor:
    """`sigma(A) = [relu(A), 1]`: `[..., N, w] -> [..., N, w+1]` (paper 000, §1).

    The appended constant column carries the bias (the last column of `W_l`).
    """
    ones = torch.ones(A.shape[:-1] + (1,), dtype=A.dtype, device=A.device)
    return torch.cat([torch.relu(A), ones], dim=-1)


def features(A: torch.Tensor, bias: bool = True) -> torch.Tensor:
    """`S = sigma(A)` (`bias=True`, `[N, w+1]`) or the bias-free `relu(A)` (`[N, w]`)."""
    return sigma(A) if bias else torch.relu(A)
