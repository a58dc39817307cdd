"""Depth extension of paper 003, Prop 3.2 (App A.3): L_0 no larger, norm within L + k."""

from __future__ import annotations

import pytest
import torch

from bottlenecklab.theory import extend_depth, localized_loss

EPS = torch.finfo(torch.float64).eps


def _random(seed, depth, R=6, width=5, d_in=3, d_out=2, N=10):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(N, d_in, generator=g, dtype=torch.float64)
    G = torch.randn(N, d_out, generator=g, dtype=torch.float64)
    sizes = [d_in] + [width] * (depth - 1) + [d_out]
    Ws = [torch.randn(R, n, m, generator=g, dtype=torch.float64) for m, n in zip(sizes, sizes[1:])]
    norm = sum(W.pow(2).sum(dim=(-2, -1)) for W in Ws)
    c = (depth / norm).sqrt()[:, None, None]
    return X, G, [W * c for W in Ws]


@pytest.mark.parametrize("depth", [2, 3, 5])
@pytest.mark.parametrize("k", [1, 3])
def test_extension_inequalities(depth, k):
    X, G, Ws = _random(depth * 10 + k, depth)
    new = extend_depth(X, G, Ws, k)
    assert len(new) == depth + k
    before, after = localized_loss(X, G, Ws), localized_loss(X, G, new)
    assert bool((after <= before + 1e3 * EPS * before.abs().clamp_min(1)).all())
    norm = sum(W.pow(2).sum(dim=(-2, -1)) for W in new)
    assert bool((norm <= depth + k + 1e3 * EPS).all())
    # rescaled onto the sqrt(L + k) sphere the speed can only grow (when L_0 < 0)
    c = ((depth + k) / norm).sqrt()
    rescaled = after * c ** (depth + k)
    neg = after < 0
    assert bool((rescaled[neg] <= after[neg]).all())


def test_extension_fails_with_the_wrong_neuron():
    X, G, Ws = _random(1, 3, R=20)
    new = extend_depth(X, G, Ws, 1)
    # the same construction with the *largest* score instead of the most negative one
    flipped = extend_depth(X, -G, Ws, 1)
    worse = localized_loss(X, G, flipped) > localized_loss(X, G, Ws)
    assert bool(worse.any())
    assert bool((localized_loss(X, G, new) <= localized_loss(X, G, Ws) + 1e-12).all())


def test_extension_needs_two_layers():
    X, G, Ws = _random(0, 1)
    with pytest.raises(ValueError):
        extend_depth(X, G, Ws, 1)
