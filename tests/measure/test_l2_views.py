"""Fig 1 views: uncentered PCA keeps rays, ray counts, nearest-centroid accuracy; plateau
helpers."""

from __future__ import annotations

import math

import pytest
import torch

from bottlenecklab.measure._sparsity import best_per_width, plateau_start
from bottlenecklab.measure._views import (
    count_rays,
    count_rays_2d,
    nearest_centroid_accuracy,
    uncentered_pca,
)

F64 = torch.float64


def test_uncentered_pca_keeps_rays():
    g = torch.Generator().manual_seed(0)
    d = torch.randn(2, 5, generator=g, dtype=F64)
    Z = torch.cat([c * d[0:1] for c in (1.0, 2.0, 3.0)] + [c * d[1:2] for c in (0.5, 4.0)])
    P = Z @ uncentered_pca(Z, "rows")  # [5, 2]
    cos = (P[0] @ P[2]) / (P[0].norm() * P[2].norm())
    assert float(cos) == pytest.approx(1.0, abs=1e-12)
    assert uncentered_pca(Z, "columns").shape == (5, 2)
    with pytest.raises(ValueError):
        uncentered_pca(Z, "diagonal")


def test_count_rays_groups_and_drops_dead():
    g = torch.Generator().manual_seed(1)
    base = torch.randn(6, 3, generator=g, dtype=F64)
    Z = torch.cat([base, 2 * base, base[:, :1] * 3], dim=1)  # 3 rays, 7 neurons
    contrib = torch.ones(7, dtype=F64)
    assert count_rays(Z, contrib) == 3
    contrib[0] = contrib[3] = contrib[6] = 1e-9  # the first ray dead: 2 left
    assert count_rays(Z, contrib) == 2


def test_nearest_centroid_accuracy():
    P = torch.tensor([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 5.0]], dtype=F64)
    assert nearest_centroid_accuracy(P, torch.tensor([0, 0, 1, 1])) == 1.0
    assert nearest_centroid_accuracy(P, torch.tensor([0, 1, 0, 1])) < 1.0


def test_plateau_start():
    rows = [{"width": w, "v": v} for w, v in [(2, 5.0), (4, 3.0), (4, 2.5), (8, 2.0), (16, 2.0)]]
    widths, best = best_per_width(rows, "v")
    assert widths == [2.0, 4.0, 8.0, 16.0] and best == [5.0, 2.5, 2.0, 2.0]
    assert plateau_start(widths, best, 0.1) == 8.0
    assert plateau_start(widths, best, 0.3) == 4.0
    assert math.isnan(plateau_start([], [], 0.1))


def _fan(angles_deg, masses, N=5, seed=0):
    """Neuron columns in a 2-D plane of R^N at the given angles, scaled by `masses`."""
    g = torch.Generator().manual_seed(seed)
    Q, _ = torch.linalg.qr(torch.randn(N, 2, generator=g, dtype=F64))
    a = torch.tensor(angles_deg, dtype=F64) * math.pi / 180
    Z = Q @ torch.stack([torch.cos(a), torch.sin(a)])  # [N, n]
    return Z * torch.tensor(masses, dtype=F64), torch.tensor(masses, dtype=F64)


def test_count_rays_2d_groups_by_angle_and_mass():
    # three rays of 2-3 neurons (spread 4 degrees), one light stray neuron
    Z, m = _fan([0, 2, 4, 60, 62, 150, 152, 154, 100], [1, 1, 1, 1, 1, 1, 1, 1, 0.01])
    assert count_rays_2d(Z, m) == 3  # the stray holds < 5 % of the mass
    assert count_rays_2d(Z, m, mass=1.0) == 4
    # two directions 20 degrees apart (cosine 0.94 < 0.98) are two rays
    Z, m = _fan([0, 20], [1, 1])
    assert count_rays_2d(Z, m) == 2
