"""Localized loss, escape-direction solver and deep-linear baseline (paper 003, Sec 2)."""

from __future__ import annotations

import math

import pytest
import torch

from bottlenecklab.theory import (
    cost_gradient_at_zero,
    escape_directions,
    linear_escape_speed,
    localized_loss,
)

EPS = torch.finfo(torch.float64).eps


def _problem(seed: int, N: int = 12, d_in: int = 3, d_out: int = 2):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(N, d_in, generator=g, dtype=torch.float64)
    G = torch.randn(N, d_out, generator=g, dtype=torch.float64)
    return X, G, g


def _weights(sizes, g, R=3):
    return [
        torch.randn(R, n, m, generator=g, dtype=torch.float64) for m, n in zip(sizes, sizes[1:])
    ]


@pytest.mark.parametrize("depth", [1, 2, 3, 5])
@pytest.mark.parametrize("c", [0.3, 2.0])
def test_homogeneity(depth, c):
    X, G, g = _problem(depth)
    Ws = _weights([3] + [4] * (depth - 1) + [2], g)
    lhs = localized_loss(X, G, [c * W for W in Ws])
    rhs = c**depth * localized_loss(X, G, Ws)
    assert torch.allclose(lhs, rhs, rtol=1e3 * EPS, atol=1e3 * EPS * float(rhs.abs().max()))


@pytest.mark.parametrize("depth", [1, 2, 4])
def test_euler_identity(depth):
    X, G, g = _problem(10 + depth)
    Ws = [W.requires_grad_(True) for W in _weights([3] + [5] * (depth - 1) + [2], g)]
    loss = localized_loss(X, G, Ws)
    grads = torch.autograd.grad(loss.sum(), Ws)
    inner = sum((gr * W).sum(dim=(-2, -1)) for gr, W in zip(grads, Ws))
    assert torch.allclose(inner, depth * loss.detach(), rtol=1e-10, atol=1e-10)


def test_cost_gradient_matches_autograd():
    X, G, g = _problem(3)
    Y = torch.randn(12, 2, generator=g, dtype=torch.float64)
    Yhat = torch.zeros_like(Y, requires_grad=True)
    (Y - Yhat).pow(2).sum().div(12).backward()
    assert torch.allclose(cost_gradient_at_zero(Y, "mse"), Yhat.grad)
    onehot = torch.eye(3, dtype=torch.float64)[torch.tensor([0, 2, 1, 1])]
    Yhat = torch.zeros_like(onehot, requires_grad=True)
    (-(onehot * torch.log_softmax(Yhat, -1)).sum() / 4).backward()
    assert torch.allclose(cost_gradient_at_zero(onehot, "cross_entropy"), Yhat.grad)


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_linear_baseline(depth):
    X, G, _ = _problem(20 + depth)
    res = escape_directions(
        X, G, [3] * (depth - 1), restarts=8, steps=1500, lr=0.1, lr_end=1e-6, linear=True
    )
    target = linear_escape_speed(X, G, depth)
    assert abs(float(res.speed.max()) - target) <= 1e-6 * target
    # every layer of the best restart at unit norm (layer-wise homogeneity)
    assert torch.allclose(
        res.layer_norms[res.best()], torch.ones(depth, dtype=torch.float64), atol=1e-3
    )


def test_linear_baseline_fails_on_wrong_value():
    X, G, _ = _problem(7)
    res = escape_directions(X, G, [3], restarts=4, steps=800, lr=0.1, lr_end=1e-6, linear=True)
    wrong = float(torch.linalg.matrix_norm(G.T @ X))  # Frobenius: the L = 1 value
    assert abs(float(res.speed.max()) - wrong) > 1e-3 * wrong


def test_solver_on_sphere_and_seeded():
    X, G, _ = _problem(5)
    a = escape_directions(X, G, [4, 4], restarts=5, steps=50, seed=3)
    b = escape_directions(X, G, [4, 4], restarts=5, steps=50, seed=3)
    norm_sq = sum(W.pow(2).sum(dim=(-2, -1)) for W in a.weights)
    assert torch.allclose(norm_sq, torch.full((5,), 3.0, dtype=torch.float64))
    assert torch.equal(a.speed, b.speed)
    assert torch.allclose(a.speed, -localized_loss(X, G, a.weights))


def test_dead_starts_redrawn_and_counted():
    # width 1 on the circle: many starts have a dead hidden unit
    from bottlenecklab.theory import circle_inputs

    X, G = circle_inputs()
    res = escape_directions(X, G, [1, 1], restarts=64, steps=10, seed=0)
    assert res.dead_starts > 0
    assert bool((res.speed != 0).all() | (res.kkt > 0).all())


def test_linear_speed_depth_error():
    X, G, _ = _problem(1)
    with pytest.raises(ValueError):
        linear_escape_speed(X, G, 0)
    assert math.isfinite(linear_escape_speed(X, G, 1))
