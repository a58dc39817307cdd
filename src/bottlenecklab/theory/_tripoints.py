"""Tripoints of a decision map: where three or more classes meet (paper 002, slide
'Implications: Classification')."""

from __future__ import annotations

import torch

__all__ = ["tripoint_blocks"]


def tripoint_blocks(labels: torch.Tensor) -> torch.Tensor:
    """The 2x2 blocks of neighbouring grid points that carry at least 3 distinct labels.

    A network whose representation passes through a rank-1 bottleneck labels the plane by
    a function of one scalar, so its classes meet only in pairs: no such block (up to a
    boundary passing exactly between grid points).

    Args:
        labels: `[H, W]` integer class labels on a regular grid.
    Returns:
        `[K, 2]` long: the index `(i, j)` of the top-left point of each such block.
    """
    corners = torch.stack(
        [labels[:-1, :-1], labels[1:, :-1], labels[:-1, 1:], labels[1:, 1:]], dim=-1
    )  # [H-1, W-1, 4]
    s = torch.sort(corners, dim=-1).values
    distinct = 1 + (s[..., 1:] != s[..., :-1]).sum(-1)  # [H-1, W-1]
    return torch.nonzero(distinct >= 3)
