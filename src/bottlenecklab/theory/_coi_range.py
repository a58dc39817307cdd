"""Where the cost of identity is finite: the part of `A` outside the range of `S`
(paper 000, §1.3: the norm is infinite there)."""

from __future__ import annotations

import torch

from bottlenecklab.theory._coi import KernelSVD
from bottlenecklab.theory._features import features

__all__ = ["coi_residual"]


def coi_residual(A: torch.Tensor, *, bias: bool = True) -> torch.Tensor:
    """`||A - S S^+ A||_F / ||A||_F` with `S = sigma(A)` (or `relu(A)`), a 0-d tensor.

    Zero (to round-off) exactly when the `gamma = 0` cost of identity is finite, e.g. for
    `A >= 0`. `measure` applies it to a network's layers (`coi_columns`).

    Args:
        A: `[N, w]`
        bias: `S = [relu(A), 1]` (`True`) or `relu(A)`.
    """
    return KernelSVD.of(features(A, bias)).norm_sq_and_residual(A)[1]
