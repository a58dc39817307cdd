"""A deep linear FCNN against the closed forms: cost gap and geodesic Grams."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bottlenecklab.measure import end_to_end_matrix
from bottlenecklab.measure._linear_net import linear_cost_gap, linear_geodesic_errors
from bottlenecklab.models import FCNNConfig
from bottlenecklab.theory import optimal_linear_weights


def _linear(depth: int, width: int = 4):
    cfg = FCNNConfig(depth=depth, width=width, activation="identity", bias_scale=0.0)
    return cfg.build(3, 2, seed=0, dtype=torch.float64)


@pytest.mark.parametrize("depth", [2, 5])
def test_optimal_weights_have_zero_gap_and_geodesic_grams(depth):
    A = np.random.default_rng(1).standard_normal((2, 3))
    net = _linear(depth)
    with torch.no_grad():
        for p, W in zip(net.weights, optimal_linear_weights(A, depth, 4, seed=2)):
            p.copy_(torch.as_tensor(W))
    np.testing.assert_allclose(end_to_end_matrix(net), A, atol=1e-12)
    assert abs(linear_cost_gap(net)) < 1e-12
    X = np.random.default_rng(3).standard_normal((7, 3))
    assert linear_geodesic_errors(net, X).max() < 1e-10


def test_random_weights_have_a_gap():
    net = _linear(4)
    assert linear_cost_gap(net) > 0.05
    assert linear_geodesic_errors(net, np.eye(3)).max() > 0.05


def test_zero_network():
    net = _linear(3)
    with torch.no_grad():
        for p in net.weights:
            p.zero_()
    assert linear_cost_gap(net) == 0.0
