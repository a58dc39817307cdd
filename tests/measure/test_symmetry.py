"""Spectral gaps, path crossings and rotation diagnostics (paper 001 Fig 2)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from bottlenecklab.measure import (
    haar_rotation_about,
    largest_gap,
    layer_distance_map,
    path_crossings,
    rotation_ratio,
)
from bottlenecklab.models import FCNNConfig

EPS = torch.finfo(torch.float64).eps


@pytest.mark.parametrize(
    "s, where, ratio",
    [
        ((5.0, 4.0, 1.0, 0.5), 2, 4.0),
        ((9.0, 1.0, 0.9, 0.8), 1, 9.0),
        ((3.0, 2.0, 1.5, 0.0), 3, math.inf),
    ],
)
def test_largest_gap(s, where, ratio):
    i, g = largest_gap(torch.diag(torch.tensor(s, dtype=torch.float64)))
    assert i == where and g == pytest.approx(ratio)


def test_largest_gap_ignores_ratios_below_the_cut():
    """Two dead units (1e-14, 1e-20) make a huge ratio among themselves; the top gap
    (2 -> 0.1, ratio 20) is above the cut and the gap into the cut (0.1 / 1e-14) counts."""
    W = torch.diag(torch.tensor([3.0, 2.0, 0.1, 1e-14, 1e-20], dtype=torch.float64))
    assert largest_gap(W)[0] == 3
    W = torch.diag(torch.tensor([3.0, 2.0, 0.1, 0.09, 1e-20], dtype=torch.float64))
    assert largest_gap(W) == (4, pytest.approx(0.09 / 1e-20))
    assert largest_gap(W, rel=0.04)[0] == 2  # 0.09 below the cut: the top gap wins


def test_path_crossings_counts_an_x_once_and_parallels_never():
    x = torch.tensor([[[0.0, 0.0], [1.0, 1.0]], [[0.0, 1.0], [1.0, 0.0]]], dtype=torch.float64)
    assert path_crossings(x) == 1
    par = torch.tensor([[[0.0, 0.0], [1.0, 0.0]], [[0.0, 1.0], [1.0, 1.0]]], dtype=torch.float64)
    assert path_crossings(par) == 0
    # a path crossing itself does not count; three segments crossing one line: 3
    zig = torch.tensor([[[0.0, -1], [1, 1], [2, -1], [3, 1]]], dtype=torch.float64)
    line = torch.tensor([[[-1.0, 0.0], [0.0, 0.0], [4.0, 0.0]]], dtype=torch.float64)
    assert path_crossings(torch.cat([zig, torch.cat([line, line[:, -1:]], dim=1)])) == 3


def test_haar_rotation_is_orthogonal_and_fixes_w():
    gen = torch.Generator().manual_seed(0)
    w = torch.randn(7, generator=gen, dtype=torch.float64)
    w = w / w.norm()
    Q = haar_rotation_about(w, gen)
    assert torch.allclose(Q @ Q.T, torch.eye(7, dtype=torch.float64), atol=100 * EPS)
    assert torch.allclose(Q @ w, w, atol=100 * EPS)


def test_rotation_ratio_of_the_inputs_is_one_and_of_an_invariant_layer_small():
    gen = torch.Generator().manual_seed(1)
    d = 5
    w = np.eye(d)[0]
    V = np.random.default_rng(0).standard_normal((20, d))
    net = FCNNConfig(depth=3, width=d, bias_scale=0.0).build(d, 1, seed=0, dtype=torch.float64)
    assert torch.allclose(rotation_ratio(net, 0, V, w, gen), torch.ones(20, dtype=torch.float64))
    # a first layer that reads only w^T v: alpha_1 is invariant to rotations about w
    with torch.no_grad():
        net.weights[0].zero_()
        net.weights[0][0, 0] = 1.0
        net.weights[0][1, 0] = -1.0
    ratios = rotation_ratio(net, 1, V, w, gen)
    assert float(ratios.max()) < 1e-12


def test_distance_map_of_an_invariant_layer_is_radial():
    """A layer reading `||v_perp||^2`-like features of `w^T v` only: the map is constant."""
    gen = torch.Generator().manual_seed(2)
    d = 4
    net = FCNNConfig(depth=2, width=d, bias_scale=0.0).build(d, 1, seed=0, dtype=torch.float64)
    with torch.no_grad():
        net.weights[0].zero_()
        net.weights[0][0, 0] = 1.0
    coords, dist = layer_distance_map(net, 1, np.eye(d)[0], 0.5, 1.0, 7, gen)
    assert coords.shape == (7,) and dist.shape == (7, 7)
    assert float(dist.max()) < 1e-12
