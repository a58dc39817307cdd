"""Neuron merging and 1-D pruning on FCNNs: outputs kept, ||theta||^2 not raised (hypothesis
property tests, with neurons that must not merge), the bipartite pattern checker and the
kernel rank."""

from __future__ import annotations

import math

import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from bottlenecklab import measure, theory
from bottlenecklab.measure._sparsity import (
    KERNEL_RANK_RULE,
    bipartite_pattern,
    kernel_rank,
    merge_neurons,
    prune_fcnn_one_dim,
)
from bottlenecklab.models import FCNNConfig

F64 = torch.float64


def _planted(seed: int, n_base: int, copies: int, slope: float, depth: int, beta: float):
    """A net whose first hidden layer holds `n_base` neurons, each with `copies` positive
    multiples (mergeable), one negative multiple and one with a shifted bias (different
    active pattern: must stay)."""
    g = torch.Generator().manual_seed(seed)
    d_in, N = 3, 9
    X = torch.randn(N, d_in, generator=g, dtype=F64)
    base_w = torch.randn(n_base, d_in, generator=g, dtype=F64)
    base_b = torch.randn(n_base, generator=g, dtype=F64)
    rows, bias, distinct = [], [], []
    for k in range(n_base):
        distinct += [len(rows), len(rows) + copies + 1, len(rows) + copies + 2]
        for c in [1.0] + [0.3 + 2 * float(torch.rand(1, generator=g)) for _ in range(copies)]:
            rows.append(c * base_w[k])
            bias.append(c * base_b[k])
        rows.append(-1.5 * base_w[k])  # negatively proportional
        bias.append(-1.5 * base_b[k])
        rows.append(base_w[k])  # same incoming weights, shifted bias
        bias.append(base_b[k] + 0.7)
    width = len(rows)
    net = FCNNConfig(depth=depth, width=width, slope=slope, bias_scale=beta).build(
        d_in, 2, seed=seed, dtype=F64
    )
    with torch.no_grad():
        net.weights[0].copy_(torch.stack(rows))
        net.biases[0].copy_(torch.tensor(bias, dtype=F64))
        for b in net.biases[1:]:
            b.normal_(generator=g)
    return net, X, distinct


def _max_cosine(Z: torch.Tensor) -> float:
    U = Z / Z.norm(dim=0, keepdim=True)
    C = (U.T @ U).detach()
    C.fill_diagonal_(-1.0)
    return float(C.max())


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n_base=st.integers(1, 4),
    copies=st.integers(0, 3),
    slope=st.sampled_from([0.0, 0.2]),
    depth=st.sampled_from([2, 3]),
)
def test_merge_keeps_outputs_and_norm(seed, n_base, copies, slope, depth):
    net, X, distinct = _planted(seed, n_base, copies, slope, depth, beta=1.0)
    # only the planted neurons are proportional: no accidental near-proportional pair among
    # the random base neurons (seed 579 drew two at cosine 0.9996) nor in the random deeper
    # layer (merging those moves the outputs by their proportionality error)
    Z = net.forward_path(X)[0]
    assume(_max_cosine(Z[0][:, distinct]) < 0.99)
    assume(depth == 2 or _max_cosine(Z[1]) < 0.99)
    merged, counts = merge_neurons(net, X)
    with torch.no_grad():
        y0, y1 = net(X), merged(X)
        scale = float(y0.abs().max()) + 1.0
        assert float((y0 - y1).abs().max()) <= 1e-10 * scale
        assert float(merged.param_norm_sq()) <= float(net.param_norm_sq()) * (1 + 1e-12)
    assert len(counts) == depth - 1
    # first layer: at most the base neurons plus their negative and shifted partners remain
    assert counts[0] <= 3 * n_base


def test_merge_keeps_unmergeable():
    """With a leaky slope no first-layer neuron is dead, so exactly 3 per base survive:
    the merged copies, the negative one and the shifted-bias one."""
    net, X, _ = _planted(5, 3, 2, 0.2, 2, beta=1.0)
    _, counts = merge_neurons(net, X)
    assert counts == [9]


def test_merge_drops_dead_neurons():
    net, X, _ = _planted(1, 2, 1, 0.0, 2, beta=1.0)
    _, before = merge_neurons(net, X)
    with torch.no_grad():
        assert bool((net.forward_path(X)[0][0][:, 3] > 0).any())  # the shifted one is alive
        net.weights[0][3].zero_()
        net.biases[0][3] = -1.0  # now dead on every sample
    merged, after = merge_neurons(net, X)
    with torch.no_grad():
        assert torch.allclose(merged(X), net(X), atol=1e-10)
    assert after[0] == before[0] - 1


def test_prune_one_dim_network():
    x = torch.linspace(-1, 1, 10, dtype=F64)[:, None]
    net = FCNNConfig(depth=2, width=200).build(1, 1, seed=0, dtype=F64)
    with torch.no_grad():
        net.biases[0].normal_(generator=torch.Generator().manual_seed(1))
    pruned = prune_fcnn_one_dim(net, x)
    with torch.no_grad():
        assert float((pruned(x) - net(x)).abs().max()) < 1e-9
        assert float(pruned.param_norm_sq()) <= float(net.param_norm_sq())
    assert pruned.weights[0].shape[0] <= 4 * 10


def test_bipartite_pattern_on_exact_solution():
    """The N^2/4 pair neurons (e_i + e_j)/sqrt 2 with outgoing weights of the optimum cover
    every pair; Remark 23's width-N net matches none."""
    N = 8
    dirs = theory.pair_directions(N)
    net = FCNNConfig(depth=2, width=dirs.shape[0], bias_scale=0.0).build(N, N, seed=0, dtype=F64)
    with torch.no_grad():
        net.weights[0].copy_(dirs)
        net.weights[1].copy_(dirs.T.clone())
    X = torch.eye(N, dtype=F64)
    out = bipartite_pattern(net, X)
    assert out == {"neurons": 16.0, "matched": 16.0, "pairs_covered": 16.0, "pairs": 16.0}
    W1, W2 = theory.bipartite_full_width_weights(N)
    wide = FCNNConfig(depth=2, width=N, bias_scale=0.0).build(N, N, seed=0, dtype=F64)
    with torch.no_grad():
        wide.weights[0].copy_(W1)
        wide.weights[1].copy_(W2)
    assert bipartite_pattern(wide, X)["pairs_covered"] == 0.0
    assert math.isfinite(out["neurons"])


def test_kernel_rank_counts_as_its_rule():
    """`kernel_rank` counts `s_k(K) > 1e-6 s_1(K)` of `K = Z Z^T` (`KERNEL_RANK_RULE`): a
    planted spectrum of `Z` read by hand."""
    g = torch.Generator().manual_seed(0)
    U, _ = torch.linalg.qr(torch.randn(8, 8, generator=g, dtype=F64))
    s = torch.tensor([1.0, 0.1, 1e-2, 2e-3, 5e-4, 1e-5, 0.0, 0.0], dtype=F64)
    Z = U @ torch.diag(s)  # s_k(K) = s_k^2: 1, 1e-2, 1e-4, 4e-6 above 1e-6; 2.5e-7 below
    assert KERNEL_RANK_RULE == measure.RankRule.relative(1e-6)
    assert kernel_rank(Z) == 4 == theory.numerical_rank(Z @ Z.T, 1e-6)
