"""The explicit ReLU networks of paper 001: Prop 12 and Example 20 (App. D.1)."""

from __future__ import annotations

import numpy as np
import pytest

from bottlenecklab.theory import (
    identity_construction,
    non_lipschitz_excess,
    non_lipschitz_norm_sq,
    non_lipschitz_table,
    non_lipschitz_target,
    non_lipschitz_weights,
    relu_network,
)


@pytest.mark.parametrize("k,d,depth,width", [(1, 3, 2, 1), (2, 5, 4, 6), (3, 8, 9, 12)])
def test_prop12_identity(k, d, depth, width):
    c = identity_construction(k, d, depth, width, seed=k)
    X = c.sample(50, seed=1)
    np.testing.assert_allclose(relu_network(c.weights, X), X, atol=1e-12)
    assert c.norm_sq() == pytest.approx(depth * k, rel=1e-13)
    np.testing.assert_allclose(c.O.T @ c.O, c.basis @ c.basis.T, atol=1e-13)


def test_prop12_is_not_the_identity_off_omega():
    c = identity_construction(2, 5, 4, 6, seed=0)
    X = -c.sample(20, seed=1)  # the opposite cone
    assert np.abs(relu_network(c.weights, X) - X).max() > 0.1


@pytest.mark.parametrize("depth", [4, 10, 64, 1000])
def test_example20_function_and_norm(depth):
    Ws = non_lipschitz_weights(depth, 0.75)
    assert len(Ws) == depth
    X = np.random.default_rng(0).uniform(0, 1, (200, 3))
    np.testing.assert_allclose(relu_network(Ws, X), non_lipschitz_target(X), atol=1e-9)
    norm = sum(np.sum(W**2) for W in Ws)
    assert non_lipschitz_norm_sq(depth, 0.75) == pytest.approx(norm, rel=1e-12)
    assert non_lipschitz_excess(depth, 0.75) == pytest.approx(norm - 3 * depth, abs=1e-9 * depth)


@pytest.mark.parametrize("gamma", [0.6, 0.75, 0.9])
def test_example20_excess_asymptotics(gamma):
    depth = 10**6
    eps = depth**-gamma
    approx = 12 * depth ** (1 - 2 * gamma) + 2 * np.exp(-(depth - 2) * eps)
    assert non_lipschitz_excess(depth, gamma) == pytest.approx(approx, rel=0.01)


@pytest.mark.parametrize("depth,gamma", [(5, 0.75), (10, 0.5), (10, 1.0)])
def test_example20_rejects_bad_arguments(depth, gamma):
    with pytest.raises(ValueError):
        non_lipschitz_weights(depth, gamma)


def test_non_lipschitz_table_matches_the_closed_forms():
    X = np.random.default_rng(5).uniform(0, 1, (20, 3))
    rows = non_lipschitz_table((10, 100), 0.75, X)
    assert [r["depth"] for r in rows] == [10, 100]
    for r in rows:
        assert r["norm_sum"] == pytest.approx(r["norm_closed"], rel=1e-12)
        assert r["f_error"] < 1e-9
        assert r["excess"] == non_lipschitz_excess(r["depth"], 0.75)
        assert r["norm_closed"] - 3 * r["depth"] == pytest.approx(r["excess"], rel=1e-9)
