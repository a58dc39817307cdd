"""Spectral counts shared by every paper: numerical rank from singular values."""

from __future__ import annotations

import torch

__all__ = ["numerical_rank"]


def numerical_rank(
    A: torch.Tensor | None,
    rel: float = 1e-3,
    *,
    floor: float = 0.0,
    singular_values: torch.Tensor | None = None,
) -> int:
    """Number of singular values of `A` above `rel * s_1` (and above `floor`).

    The relative cut-off is the papers' (e.g. `s_i > 1e-3 s_1` for the Jacobian rank of
    paper 001, spec `depth-and-rank.md`; `0.1` absolute for the middle weight matrix is
    `rel=0, floor=0.1`). A zero matrix has rank 0.

    Args:
        A: `[m, n]` (or `[..., m, n]`: the count is over the last two dims of one matrix);
        rel: relative cut-off in `[0, 1)`.
        floor: absolute cut-off `>= 0`.
        singular_values: `torch.linalg.svdvals(A)` when the caller has them (then `A` may
            be `None`: e.g. a representation known only through its covariance).
    """
    s = torch.linalg.svdvals(A.detach()) if singular_values is None else singular_values
    if s.numel() == 0 or float(s.max()) == 0.0:
        return 0
    cut = max(rel * float(s.max()), floor)
    return int((s > cut).sum())
