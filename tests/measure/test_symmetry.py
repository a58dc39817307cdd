"""Spectral gaps, path crossings and rotation diagnostics (paper 001 Fig 2)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from bottlenecklab.measure import centred_rank, largest_gap
from bottlenecklab.measure._symmetry import (
    crossing_counts,
    curve_distances,
    gap_rank_rows,
    haar_rotation_about,
    invariant_coordinates,
    knn_r2,
    layer_distance_map,
    layer_state_r2,
    path_crossings,
    rotation_ratio,
    state_bijection_r2,
    step_r2,
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


def _flow(n: int = 60, T: int = 10, seed: int = 0) -> np.ndarray:
    """Paths of a 2-D flow that never cross: `u(t) = r e^{-t/5} (cos phi, sin phi)`
    (rays toward the origin), `[n, T + 1, 2]`."""
    rng = np.random.default_rng(seed)
    r, phi = rng.uniform(1, 2, n), rng.uniform(0, np.pi / 2, n)
    t = np.arange(T + 1)
    return (r[:, None] * np.exp(-t / 5))[..., None] * np.stack([np.cos(phi), np.sin(phi)], -1)[
        :, None
    ]


def test_knn_r2_of_a_function_is_near_one_and_of_noise_near_zero():
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (2000, 2))
    y = np.stack([np.sin(2 * x[:, 0]), x[:, 0] * x[:, 1]], axis=1)
    r2 = knn_r2(x[:1500], y[:1500], x[1500:], y[1500:], k=10)
    assert r2.min() > 0.9
    noise = rng.standard_normal((2000, 2))
    assert knn_r2(x[:1500], noise[:1500], x[1500:], noise[1500:], k=10).max() < 0.2


def test_state_bijection_r2_needs_both_directions():
    """`z` a bijection of `u` gives ~1; `z` forgetting `u_2` fails `z -> u_2`."""
    rng = np.random.default_rng(1)
    u = rng.uniform(0, 1, (3000, 2))
    z = np.stack([u[:, 0] + u[:, 1] ** 2, np.exp(u[:, 1]) - u[:, 0]], axis=1)
    assert state_bijection_r2(z[:2000], u[:2000], z[2000:], u[2000:]) > 0.95
    lost = np.stack([u[:, 0], u[:, 0] ** 2], axis=1)  # forgets u_2
    assert state_bijection_r2(lost[:2000], u[:2000], lost[2000:], u[2000:]) < 0.2


def test_invariant_coordinates():
    w = np.array([0.6, 0.8, 0.0])
    v = np.array([[1.0, 2.0, 3.0]])
    a = v @ w
    u = invariant_coordinates(v, w)
    assert u[0] == pytest.approx([a[0] ** 2, 14.0 - a[0] ** 2], rel=1e-14)


def test_crossings_between_far_paths_count_a_planted_crossing_only():
    """A flow's paths do not cross; swapping two far-apart paths' states in the plane (a
    representation that confuses different dynamics) crosses them, and those crossings
    count as far; the pair mask leaves out crossings between near paths."""
    u = _flow()
    far = torch.as_tensor(curve_distances(u) > 0.2)
    assert path_crossings(torch.as_tensor(u), far) == 0
    z = u.copy()
    d = curve_distances(u)
    p, q = np.unravel_index(np.argmax(d), d.shape)
    z[p] = u[p][::-1]  # path p runs backwards: it now crosses the paths between p and q
    z[p] = z[p] + (u[q, 0] - z[p, 0])  # ... from path q's start
    planted = path_crossings(torch.as_tensor(z), far)
    assert planted > 0
    assert path_crossings(torch.as_tensor(z), torch.zeros_like(far)) == 0


def test_crossing_counts_ratio_is_trained_over_untrained_and_nan_without_untrained():
    u = _flow()
    z = u.copy()
    d = curve_distances(u)
    p, q = np.unravel_index(np.argmax(d), d.shape)
    z[p] = u[p][::-1] + (u[q, 0] - u[p][::-1][0])  # the planted crossing above
    c = crossing_counts(u, z, u, 0.2)  # trained: the flow itself, untrained: planted
    assert c["far_crossings"] == 0 and c["far_crossings_init"] > 0
    assert c["far_crossing_ratio"] == 0.0 and c["u_crossings"] == c["pca_crossings"] == 0
    assert math.isnan(crossing_counts(u, u, u, 0.2)["far_crossing_ratio"])


def test_step_r2_of_a_deterministic_flow_is_high_and_of_noise_low():
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, size=(400, 2))
    t = 0.9 ** np.arange(6)
    z = a[:, None, :] * t[None, :, None]  # [P, T+1, 2]: z(t+1) - z(t) = -0.1 z(t)
    assert step_r2(z[:300], z[300:], 5) > 0.95
    noise = rng.normal(size=z.shape)
    assert step_r2(noise[:300], noise[300:], 5) < 0.5


def test_layer_state_r2_rows_per_hidden_layer_and_states_at_the_layer():
    model = FCNNConfig(depth=4, width=6).build(3, 1, seed=0, dtype=torch.float64)
    init = FCNNConfig(depth=4, width=6).build(3, 1, seed=1, dtype=torch.float64)
    rng = np.random.default_rng(0)
    fit, test = rng.normal(size=(30, 3, 3)), rng.normal(size=(10, 3, 3))
    w = np.array([1.0, 0.0, 0.0])
    u_fit, u_test = invariant_coordinates(fit, w), invariant_coordinates(test, w)
    rows, states = layer_state_r2(model, init, fit, test, u_fit, u_test, 5, at=2)
    assert len(rows) == 3 and set(rows[0]) == {"state_r2", "state_r2_init"}
    assert states["trained"][1].shape == (10, 3, 2) and states["init"][0].shape == (30, 3, 2)
    r2 = rows[1]["state_r2"]  # layer 2
    z_fit, z_test = states["trained"]
    flat = (z_fit, u_fit, z_test, u_test)
    assert r2 == state_bijection_r2(*(x.reshape(-1, 2) for x in flat), 5)


def test_gap_rank_rows_per_layer() -> None:
    net = FCNNConfig(depth=3, width=6).build(4, 2, seed=0, dtype=torch.float64)
    X = np.random.default_rng(0).standard_normal((15, 4))
    rows = gap_rank_rows(net, X)
    assert [r["layer"] for r in rows] == [1, 2, 3]
    with torch.no_grad():
        pre, _ = net.forward_path(torch.as_tensor(X))
    for r, W, z in zip(rows, net.weights, pre):
        assert (r["gap_index"], r["gap"]) == largest_gap(W)
        assert r["centred_rank"] == centred_rank(z)
        assert 0 <= r["jacobian_rank"] <= min(W.shape[0], 4)
