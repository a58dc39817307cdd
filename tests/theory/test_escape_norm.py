"""Norm growth along an escape direction (paper 003, Prop 2.2, corrected): closed form
against the integrated gradient flow of L_0."""

from __future__ import annotations

import math

import pytest
import torch

from bottlenecklab.theory import (
    escape_blowup_time,
    escape_norm,
    escape_rate,
    escape_time_to_norm,
    linear_escape_speed,
    localized_loss,
    rk4,
)


def _linear_escape_direction(depth: int, seed: int = 0):
    """Exact escape direction of a deep linear net: rank-one chain of the top singular pair
    of `-G^T X`, every layer at unit norm (`||rho||^2 = L`)."""
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(9, 3, generator=g, dtype=torch.float64)
    G = torch.randn(9, 2, generator=g, dtype=torch.float64)
    U, S, Vh = torch.linalg.svd(-(G.T @ X))
    u, v = U[:, 0], Vh[0]
    e = torch.zeros(4, dtype=torch.float64)
    e[0] = 1.0
    if depth == 1:
        Ws = [torch.outer(u, v)]
    else:
        Ws = [torch.outer(e, v)] + [torch.outer(e, e)] * (depth - 2) + [torch.outer(u, e)]
    return X, G, Ws, float(S[0])


def _flow(X, G, Ws, r0, t1, steps, depth):
    theta = tuple(W * (r0 / math.sqrt(depth)) for W in Ws)

    def f(t, state):
        ws = [w.detach().requires_grad_(True) for w in state]
        grads = torch.autograd.grad(localized_loss(X, G, ws, linear=True), ws)
        return tuple(-gr for gr in grads)

    ys = rk4(f, theta, 0.0, t1, steps)
    return [math.sqrt(sum(float(w.pow(2).sum()) for w in y)) for y in ys]


@pytest.mark.parametrize("depth", [2, 3, 4])
def test_norm_growth_matches_integrated_flow(depth):
    X, G, Ws, s = _linear_escape_direction(depth)
    assert abs(s - linear_escape_speed(X, G, depth)) < 1e-12
    r0 = 0.5
    t_blow = escape_blowup_time(r0, s, depth)
    t1 = 0.8 * t_blow if math.isfinite(t_blow) else 2.0 / s
    steps = 400
    norms = _flow(X, G, Ws, r0, t1, steps, depth)
    for i in (steps // 4, steps // 2, steps):
        t = t1 * i / steps
        assert abs(norms[i] - escape_norm(t, r0, s, depth)) <= 1e-6 * norms[i]


@pytest.mark.parametrize("depth", [2, 3, 5])
def test_time_to_norm_inverts_norm(depth):
    r0, s = 0.01, 0.7
    t = escape_time_to_norm(r0, 1.0, s, depth)
    assert abs(escape_norm(t, r0, s, depth) - 1.0) <= 1e-9


def test_rate_and_blowup():
    assert escape_rate(0.5, 2) == 0.5
    assert math.isinf(escape_blowup_time(0.1, 0.5, 2))
    t = escape_blowup_time(0.1, 0.5, 3)
    assert math.isinf(escape_norm(t * 1.0001, 0.1, 0.5, 3))
    assert math.isfinite(escape_norm(t * 0.999, 0.1, 0.5, 3))


def test_uncorrected_formula_fails():
    """The paper's unit-sphere constants (`k = L s`) disagree with the integrated flow."""
    X, G, Ws, s = _linear_escape_direction(3)
    r0 = 0.5
    t1 = 0.5 * escape_blowup_time(r0, s, 3)
    norm = _flow(X, G, Ws, r0, t1, 200, 3)[-1]
    wrong = (r0 ** (-1) - 3 * s * t1) ** (-1) if r0 ** (-1) > 3 * s * t1 else math.inf
    assert abs(norm - wrong) > 1e-3 * norm
