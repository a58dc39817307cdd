"""PCA of representation paths (paper 000, Fig 2c), balancedness."""

from __future__ import annotations

import math

import numpy as np
import torch

from bottlenecklab.measure import LayerTable
from bottlenecklab.measure._balance import balancedness_residual
from bottlenecklab.measure._views import pca_paths


def test_pca_of_a_planar_path_is_exact() -> None:
    g = torch.Generator().manual_seed(0)
    basis = torch.linalg.qr(torch.randn(6, 2, generator=g, dtype=torch.float64))[0]  # [w, 2]
    path = [torch.randn(5, 2, generator=g, dtype=torch.float64) @ basis.T for _ in range(4)]
    coords, explained = pca_paths(path)
    assert coords.shape == (4, 5, 2)
    assert math.isclose(float(explained.sum()), 1.0, rel_tol=1e-12)
    # Distances are preserved inside the plane.
    d_full = (path[0][0] - path[3][4]).norm()
    d_pca = (coords[0, 0] - coords[3, 4]).norm()
    assert math.isclose(float(d_full), float(d_pca), rel_tol=1e-10)


def test_balancedness_zero_on_a_balanced_table() -> None:
    """Rows built to satisfy Prop 10: ||W_l||^2 = ||W_1||^2 + L~ int ||b||^2."""
    leak, p = 2.0, np.linspace(0.1, 1.0, 10)
    b2 = np.full(10, 0.3)
    w2 = 5.0 + leak * 0.3 * (p - p[0])
    rows = [
        {"p": float(pi), "W_norm_sq": float(wi), "bias_norm_sq": float(bi)}
        for pi, wi, bi in zip(p, w2, b2)
    ]
    res = balancedness_residual(LayerTable(rows=rows, spectra=[]), leak)
    np.testing.assert_allclose(res, 0.0, atol=1e-12)
