"""2-D principal-component view of the representation paths (paper 000, Fig 2c)."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from bottlenecklab.measure._coi import as_float64

__all__ = ["pca_paths"]


def pca_paths(
    path: Sequence[torch.Tensor], n_components: int = 2
) -> tuple[torch.Tensor, torch.Tensor]:
    """Project every sample's path `A_0 -> A_L` onto the top principal directions.

    The directions are those of all representation rows of all layers together
    (`[(L+1) N, w]`, centered), so that the paths of all samples share one plane.

    Args:
        path: `[A_0, ..., A_L]`, each `[N, w]`
        n_components: dimensions kept.
    Returns:
        `coords` `[L+1, N, n_components]` and the explained-variance ratios `[n_components]`.
    """
    P = torch.stack([as_float64(A) for A in path])  # [L+1, N, w]
    rows = P.reshape(-1, P.shape[-1])
    mean = rows.mean(0)
    _, s, Vh = torch.linalg.svd(rows - mean, full_matrices=False)
    coords = (P - mean) @ Vh[:n_components].T  # [L+1, N, k]
    var = s.pow(2)
    return coords, var[:n_components] / var.sum()
