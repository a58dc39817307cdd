"""Low-dimensional views of representations: the 2-D principal-component view of the
representation paths (paper 000, Fig 2c) and, for paper 004's Fig 1, the uncentered 2-D PCA
of data points and neurons, rays of neurons, nearest-centroid clustering."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from bottlenecklab.measure._coi import as_float64

__all__ = [
    "count_rays",
    "count_rays_2d",
    "nearest_centroid_accuracy",
    "pca_paths",
    "uncentered_pca",
]


def uncentered_pca(Z: torch.Tensor, view: str, k: int = 2) -> torch.Tensor:
    """Projection basis of an uncentered PCA (SVD of `Z`, no mean removed, so rays through the
    origin stay rays; spec `l2-sparsity.md`, Attraction and repulsion).

    Args:
        Z: `[N, n]`
        view: `rows` (data points: the top right singular vectors, `[n, k]`
            coordinates `Z @ basis`) or `columns` (neurons: the top left singular vectors,
            `[N, k]`; coordinates `Z.T @ basis`).
    """
    U, _, Vh = torch.linalg.svd(Z, full_matrices=False)
    if view == "rows":
        return Vh[:k].T
    if view == "columns":
        return U[:, :k]
    raise ValueError(f"view must be rows or columns, got {view!r}")


def count_rays(
    Z: torch.Tensor, contribution: torch.Tensor, cosine: float = 0.98, dead_rel: float = 1e-4
) -> int:
    """Number of rays the active neurons lie on: columns of `Z` grouped greedily by cosine
    `> cosine` to a group's first member; neurons whose `contribution` (`||w_i|| ||v_i||`) is
    below `dead_rel` of the layer total, or whose column is zero, are excluded (spec).

    Args:
        Z: pre-activations `[N, n]`
        contribution: `[n]`, non-negative.
    """
    alive = (contribution >= dead_rel * contribution.sum()) & (Z.norm(dim=0) > 0)
    cols = Z[:, alive]
    unit = cols / cols.norm(dim=0, keepdim=True)
    reps: list[torch.Tensor] = []
    for i in range(unit.shape[1]):
        if not any(float(unit[:, i] @ r) > cosine for r in reps):
            reps.append(unit[:, i])
    return len(reps)


def count_rays_2d(
    Z: torch.Tensor, contribution: torch.Tensor, cosine: float = 0.98, mass: float = 0.95
) -> int:
    """Rays as paper 004 counts them (Fig 1, by eye): in the uncentered 2-D PCA of the neuron
    columns of `Z`, the fewest angular groups (cosine `> cosine` to the group's centre
    direction) that hold `mass` of the total `contribution` (`sum ||w_i|| ||v_i||`; spec
    Decision "rays as the paper counts them").

    Groups are chosen greedily, each the arc (centred on a neuron's direction) holding the
    most of the remaining contribution; greedy covering can only over-count the fewest.

    Args:
        Z: pre-activations `[N, n]`
        contribution: `[n]`, non-negative.
    """
    P = Z.T @ uncentered_pca(Z, "columns")  # [n, 2]
    norm = P.norm(dim=1)
    m = torch.where(norm > 0, contribution, torch.zeros_like(contribution)).clone()
    total = float(contribution.sum())
    if total <= 0:
        return 0
    unit = P / norm.clamp_min(torch.finfo(P.dtype).tiny)[:, None]
    close = (unit @ unit.T) > cosine  # [n, n]: j in the arc centred on i
    held, groups = 0.0, 0
    while held < mass * total and float(m.sum()) > 0:
        gain = close.to(m.dtype) @ m  # [n] contribution each arc would add
        i = int(gain.argmax())
        held += float(gain[i])
        m = torch.where(close[i], torch.zeros_like(m), m)
        groups += 1
    return groups


def nearest_centroid_accuracy(P: torch.Tensor, labels: torch.Tensor) -> float:
    """Fraction of points whose nearest class centroid (Euclidean, in `P`'s coordinates) is
    their own class's.

    Args:
        P: `[N, k]` coordinates
        labels: `[N]` integers.
    """
    classes = torch.unique(labels)
    cents = torch.stack([P[labels == c].mean(0) for c in classes])  # [C, k]
    pred = classes[torch.cdist(P, cents).argmin(dim=1)]
    return float((pred == labels).double().mean())


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
