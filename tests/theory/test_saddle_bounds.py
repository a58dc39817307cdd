"""Tail energies, Prop 3.4 (hypothesis), the Thm 3.1 constant and weak balancedness
(paper 003)."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from bottlenecklab.theory import (
    circle_inputs,
    escape_low_rank_bound,
    escape_low_rank_budget,
    escape_low_rank_constant,
    localized_loss,
    nonlinearity_ratio,
    singular_ratio,
    tail_energy,
    weak_balancedness,
)

EPS = torch.finfo(torch.float64).eps


def test_tail_and_ratio():
    rank1 = torch.outer(torch.arange(1.0, 4.0), torch.arange(1.0, 3.0)).double()
    assert float(tail_energy(rank1)) <= 1e3 * EPS
    assert float(singular_ratio(rank1)) == pytest.approx(1e-10, rel=1e-3, abs=1e-9)
    eye = torch.eye(3, dtype=torch.float64)
    assert float(tail_energy(eye)) == pytest.approx(2 / 3, abs=1e-12)
    assert float(singular_ratio(eye)) == pytest.approx(1.0, abs=1e-12)
    Z = torch.tensor([[1.0, -1.0], [2.0, 0.0]], dtype=torch.float64)
    assert float(nonlinearity_ratio(Z)) == pytest.approx(1 / 6, abs=1e-12)


def test_thm31_constant_circle():
    X, G = circle_inputs()
    c = escape_low_rank_constant(X, G, 0.5)
    assert c == pytest.approx(37.7, abs=0.05)
    assert math.isnan(escape_low_rank_bound(1000, c))
    assert 0 < escape_low_rank_bound(10**6, c) < escape_low_rank_bound(10**5, c)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    depth=st.integers(2, 6),
    width=st.integers(1, 6),
    scale=st.floats(0.1, 1.0),
)
def test_prop34_random_theta(seed, depth, width, scale):
    """Random theta with ||theta||^2 <= L, sign of W_L flipped so that L_0 < 0 (spec recipe)."""
    g = torch.Generator().manual_seed(seed)
    N, d_in, d_out = 7, 3, 2
    X = torch.randn(N, d_in, generator=g, dtype=torch.float64)
    G = torch.randn(N, d_out, generator=g, dtype=torch.float64)
    sizes = [d_in] + [width] * (depth - 1) + [d_out]
    Ws = [torch.randn(1, n, m, generator=g, dtype=torch.float64) for m, n in zip(sizes, sizes[1:])]
    norm = sum(float(W.pow(2).sum()) for W in Ws)
    Ws = [W * math.sqrt(scale * depth / norm) for W in Ws]
    loss = float(localized_loss(X, G, Ws))
    if loss == 0.0:
        return
    if loss > 0:
        Ws[-1] = -Ws[-1]
    lhs, rhs, s0 = escape_low_rank_budget(X, G, Ws)
    assert float(s0) > 0
    assert float(lhs) <= float(rhs) + 1e3 * EPS * abs(float(rhs))


def test_prop34_fails_when_theta_too_large():
    """Outside ||theta||^2 <= L the bound need not hold: a large theta breaks it."""
    X, G = circle_inputs()
    from bottlenecklab.theory import circle_rank2_weights

    Ws = [W[None] * 10.0 for W in circle_rank2_weights()]
    lhs, rhs, _ = escape_low_rank_budget(X, G, Ws)
    assert float(lhs) > float(rhs)


@pytest.mark.parametrize("eta", [1e-3, 1e-2, 5e-2])
def test_weak_balancedness_gd_drift(eta):
    g = torch.Generator().manual_seed(0)
    X = torch.randn(20, 4, generator=g, dtype=torch.float64)
    Y = torch.randn(20, 3, generator=g, dtype=torch.float64)
    sizes = [4, 6, 5, 3]
    Ws = [
        (0.5 * torch.randn(n, m, generator=g, dtype=torch.float64)).requires_grad_(True)
        for m, n in zip(sizes, sizes[1:])
    ]
    a = X
    for l, W in enumerate(Ws):
        a = a @ W.T
        if l < len(Ws) - 1:
            a = torch.relu(a)
    grads = torch.autograd.grad((a - Y).pow(2).sum() / 20, Ws)
    before = weak_balancedness([W.detach() for W in Ws])
    after = weak_balancedness([W.detach() - eta * gr for W, gr in zip(Ws, grads)])
    scale = sum(float(W.detach().pow(2).sum()) for W in Ws)
    for l in range(len(Ws) - 1):
        predicted = eta**2 * (grads[l].pow(2).sum(-1) - grads[l + 1].pow(2).sum(-2))
        drift = after[l] - before[l]
        assert float((drift - predicted).abs().max()) <= 1e2 * EPS * scale
        # first order cancels: the drift is O(eta^2), not O(eta)
        assert float(drift.abs().max()) <= 10 * eta**2 * scale * (
            1 + float(sum(gr.pow(2).sum() for gr in grads))
        )
