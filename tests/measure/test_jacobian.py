"""Input Jacobians of FCNNs and the bounds of paper 001 (proof of Thm 3; Thm 15) as
property tests on random networks of several depths, slopes and bias scales."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from bottlenecklab.measure import (
    input_jacobians,
    layer_jacobians,
    representation_jacobian_ranks,
    representation_jacobians,
)
from bottlenecklab.measure._jacobian import jacobian_bounds
from bottlenecklab.models import FCNNConfig
from bottlenecklab.theory import optimal_linear_weights

SLACK = 1e-9  # float64 round-off of sums of O(100) terms


def _net(depth, slope, beta, scale, width=6, d_in=4, d_out=3, seed=0, activation="leaky_relu"):
    cfg = FCNNConfig(
        depth=depth,
        width=width,
        slope=slope,
        bias_scale=beta,
        init_scale=scale,
        activation=activation,
    )
    net = cfg.build(d_in, d_out, seed=seed, dtype=torch.float64)
    gen = torch.Generator().manual_seed(seed + 7)
    with torch.no_grad():
        for b in net.biases:  # non-zero biases, so that they matter
            b.copy_(0.3 * torch.randn(b.shape, generator=gen, dtype=torch.float64))
    return net


@pytest.mark.parametrize("activation", ["leaky_relu", "identity"])
def test_layer_jacobians_match_autograd(activation):
    net = _net(4, 0.2, 1.0, 1.0, activation=activation)
    X = torch.randn(5, 4, dtype=torch.float64)
    jacs, acts = layer_jacobians(net, X)
    J0 = jacs[0] @ net.weights[0]  # J(x -> f) = J_1 W_1
    torch.testing.assert_close(J0, input_jacobians(net, X))
    assert [J.shape for J in jacs] == [(5, 3, 6)] * 3 + [(5, 3, 3)]
    assert len(acts) == 4 and acts[0] is not None


@settings(max_examples=40, deadline=None)
@given(
    depth=st.integers(2, 10),
    slope=st.sampled_from([0.0, 0.1, -0.5, 0.9]),
    beta=st.sampled_from([0.0, 1.0]),
    scale=st.sampled_from([0.5, 1.0, 2.0]),
    seed=st.integers(0, 10_000),
)
def test_jacobian_chain_and_thm15_on_random_nets(depth, slope, beta, scale, seed):
    net = _net(depth, slope, beta, scale, seed=seed)
    X = torch.randn(8, 4, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    for row in jacobian_bounds(net, X):
        assert row["norm_sq"] >= row["schatten"] - SLACK
        assert row["schatten"] >= row["rank_bound"] - SLACK
        if row["rank"] > 0:
            assert row["thm15_slack"] >= -SLACK


def test_thm15_fails_for_a_rank_above_the_jacobian_rank():
    """The theorem needs `k <= Rank Jf(x)`: a rank-1 Jacobian at `k = 2` has `log|J|_(2) =
    -inf` on the right-hand side (a vacuous bound), so the slack is only checked below it."""
    net = _net(3, 0.0, 0.0, 1.0, width=1)  # width 1: rank <= 1
    rows = jacobian_bounds(net, torch.randn(4, 4, dtype=torch.float64))
    assert all(r["rank"] <= 1 for r in rows)
    assert all(r["thm15_k"] <= 1 for r in rows)


def test_chain_is_tight_for_the_optimal_linear_factorization():
    A = np.random.default_rng(0).standard_normal((3, 4))
    net = _net(5, 0.0, 0.0, 1.0, width=3, activation="identity")
    with torch.no_grad():
        for p, W in zip(net.weights, optimal_linear_weights(A, 5, 3)):
            p.copy_(torch.as_tensor(W))
        for b in net.biases:
            b.zero_()
    row = jacobian_bounds(net, torch.randn(2, 4, dtype=torch.float64))[0]
    assert row["norm_sq"] == pytest.approx(row["schatten"], rel=1e-12)


@pytest.mark.parametrize("activation", ["leaky_relu", "identity"])
def test_representation_jacobians_match_autograd(activation):
    """`d a~_l / dx` by the forward chain equals autograd of each pre-activation."""
    net = _net(4, 0.2, 1.0, 1.0, activation=activation)
    X = torch.randn(5, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    jacs = representation_jacobians(net, X)
    for l, G in enumerate(jacs):
        ref = torch.func.vmap(
            torch.func.jacrev(lambda x, l=l: net.forward_path(x.unsqueeze(0))[0][l][0])
        )(X)
        assert G.shape == ref.shape
        torch.testing.assert_close(G, ref, rtol=0, atol=1e-12)


def test_representation_jacobian_ranks_see_a_rank_two_bottleneck():
    """A deep linear net through a rank-2 middle weight: layers before it keep rank
    `min(width, d_in)`, from it on the Jacobian rank is 2."""
    net = _net(4, 0.2, 0.0, 1.0, activation="identity")
    with torch.no_grad():
        W = net.weights[1]
        U, s, Vh = torch.linalg.svd(W)
        W.copy_(U[:, :2] @ torch.diag(s[:2]) @ Vh[:2])
    X = torch.randn(7, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    ranks = representation_jacobian_ranks(net, X)
    assert ranks.shape == (4, 7)
    assert (ranks[0] == 4).all() and (ranks[1:] == 2).all()


@pytest.mark.parametrize("rel", [0.5, 1.0, 2.0])
def test_the_jacobian_rank_counts_by_its_rule(rel: float) -> None:
    """`jacobian_rank_log_det` counts `s_i > c s_1` with `c` of `JACOBIAN_RANK_RULE`
    (relative 1e-3): planted values just above and below the cutoff."""
    from bottlenecklab.measure._jacobian import JACOBIAN_RANK_RULE, jacobian_rank_log_det

    c = JACOBIAN_RANK_RULE.cutoff
    assert (JACOBIAN_RANK_RULE.kind, c) == ("relative", 1e-3)
    s = rel * np.array([1.0, 0.5, 1.01 * c, 0.99 * c, 1e-9])
    rank, log_det = jacobian_rank_log_det(s)
    assert rank == 3 and log_det == pytest.approx(float(np.log(s[:3]).sum()))
