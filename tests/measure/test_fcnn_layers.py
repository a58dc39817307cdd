"""Balancedness at a trained critical point, layer ranks and the Cor 8 measurement."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bottlenecklab.measure import (
    centred_rank,
    centred_singular_values,
    fcnn_balance_residuals,
    layer_s_next,
    middle_median,
    middle_rank,
    weight_spectra,
)
from bottlenecklab.measure._jacobian import jacobian_bounds
from bottlenecklab.measure._layer_ranks import (
    affine_profile,
    cor8_summary,
    layer_ranks,
    middle_affine_rank,
    middle_layer,
    random_middle_medians,
    representation_bottleneck,
)
from bottlenecklab.models import FCNNConfig
from bottlenecklab.tasks import Dataset
from bottlenecklab.training import PhaseConfig, TrainConfig, train


def _train(activation):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((32, 3))
    Y = np.tanh(X @ rng.standard_normal((3, 2)))
    data = Dataset(X, Y, X[:4], Y[:4])
    net = FCNNConfig(depth=3, width=8, activation=activation).build(
        3, 2, seed=0, dtype=torch.float64
    )
    cfg = TrainConfig(
        lam=0.01,
        dtype="float64",
        phases=(PhaseConfig("adam", 1500, 1e-2, "cosine"), PhaseConfig("lbfgs", 400, 1.0)),
    )
    train(net, data, cfg, progress=False)
    return net, X


@pytest.fixture(scope="module")
def trained():
    return _train("leaky_relu")


# Tolerances: the deep linear net is smooth and L-BFGS reaches gradient norm ~6e-9
# (measured residuals ~1e-7); the ReLU net stalls at a kink of the loss (gradient norm
# ~7e-3, measured residuals 9e-4 and 2.8e-3), so its tolerance is 1e-2. An He-initialized
# network has residuals of order 1 (`test_untrained_net_is_not_balanced`).
@pytest.mark.parametrize("activation,tol", [("identity", 1e-5), ("leaky_relu", 1e-2)])
def test_balanced_at_a_trained_critical_point(activation, tol, trained):
    net, _ = trained if activation == "leaky_relu" else _train(activation)
    res = fcnn_balance_residuals(net)
    assert res["summed"].shape == (2,)
    assert res["summed"].max() < tol
    assert res["per_neuron"].max() < tol


def test_untrained_net_is_not_balanced():
    net = FCNNConfig(depth=3, width=8).build(3, 2, seed=0, dtype=torch.float64)
    assert fcnn_balance_residuals(net)["per_neuron"].max() > 0.1


def test_ranks_and_spectra():
    net = FCNNConfig(depth=5, width=4, bias_scale=0.0).build(3, 2, seed=0, dtype=torch.float64)
    with torch.no_grad():
        net.weights[2].copy_(torch.diag(torch.tensor([2.0, 0.5, 0.05, 0.0], dtype=torch.float64)))
    assert middle_layer(5) == 3 and middle_layer(6) == 3
    assert middle_rank(net) == 2
    assert layer_ranks(net)[2] == 2
    assert len(weight_spectra(net)) == 3 + 4 + 4 + 4 + 2


def test_representation_bottleneck_fields(trained):
    net, X = trained
    out = representation_bottleneck(net, X, k=1)
    assert out["s_next"].shape == (3,)
    assert out["required"] == pytest.approx(1.5)
    assert out["bound"] > 0 and out["ntk_scale"] > 0


def test_jacobian_chain_and_thm15_on_a_trained_net(trained):
    """The bounds hold for every parameter: also at a trained critical point (float64)."""
    net, X = trained
    for row in jacobian_bounds(net, X):
        assert row["norm_sq"] >= row["schatten"] - 1e-9
        assert row["schatten"] >= row["rank_bound"] - 1e-9
        assert row["rank"] == 0 or row["thm15_slack"] >= -1e-9


@pytest.mark.parametrize(
    "dims, offset, expected",
    [
        (1, 0.0, 1),  # a line through 0
        (1, 5.0, 1),  # a line with an offset: the uncentred rank would be 2
        (2, 3.0, 2),  # a plane with an offset
        (0, 3.0, 0),  # every point the same
    ],
)
def test_centred_rank_is_the_affine_dimension(dims, offset, expected) -> None:
    """Points on a `dims`-dimensional affine subspace of R^6 (plus a constant `offset` in
    every coordinate) have centred rank `dims`, whatever the offset."""
    gen = torch.Generator().manual_seed(0)
    A = torch.randn(40, dims, generator=gen, dtype=torch.float64) @ torch.randn(
        dims, 6, generator=gen, dtype=torch.float64
    )
    assert centred_rank(A + offset) == expected


def test_centred_rank_threshold_is_relative() -> None:
    """A second direction with 0.1 of the first's spread counts only below `rel = 0.1`."""
    t = torch.linspace(-1, 1, 41, dtype=torch.float64)  # centred
    u = (-1.0) ** torch.arange(41, dtype=torch.float64)
    u = u - u.mean()
    u = u - (u @ t) / (t @ t) * t  # centred and orthogonal to t
    u = u * t.norm() / u.norm()
    A = torch.stack([t, 0.1 * u + 2.0], dim=1)  # [41, 2]
    s = centred_singular_values(A)
    assert float(s[1] / s[0]) == pytest.approx(0.1, rel=1e-12)
    assert centred_rank(A) == 1
    assert centred_rank(A, rel=0.05) == 2


def test_middle_median_reads_cor8s_window() -> None:
    """Cor 8's middle layers `p <= l/L <= 1 - p`: at `L = 8, p = 0.25` layers 2..6."""
    values = np.array([10.0, 0, 0, 0, 5, 5, 5, 10])  # layers l = 1..8
    assert middle_median(values, 0.25) == 0.0  # layers 2..6: 0, 0, 0, 5, 5
    assert middle_median(values, 0.125) == 5.0  # layers 1..7
    assert np.isnan(middle_median(values, 0.55))  # no layer in [4.4, 3.6]


def test_layer_s_next_is_the_k_plus_1st_singular_value_of_each_layer() -> None:
    """`s_(k+1)(a~_l / sqrt N)`, 0 where a layer has no `k + 1`-st neuron (the output)."""
    net = FCNNConfig(depth=4, width=6).build(3, 2, seed=1, dtype=torch.float64)
    X = torch.randn(20, 3, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    with torch.no_grad():
        pre = net.forward_path(X)[0]
    got = layer_s_next(net, X, 2)
    want = [float(torch.linalg.svdvals(z / 20**0.5)[2]) for z in pre[:-1]]
    np.testing.assert_allclose(got[:-1], want, rtol=1e-12)
    assert got[-1] == 0.0  # the output layer has 2 neurons


def test_middle_affine_rank_is_the_centred_rank_of_the_middle_layer() -> None:
    """A net whose middle layer has one neuron has a middle representation of affine
    dimension at most 1, and the value is `centred_rank` of `a~_(ceil(L/2))`."""
    net = FCNNConfig(depth=4, width=6).build(3, 2, seed=1, dtype=torch.float64)
    X = torch.randn(20, 3, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    with torch.no_grad():
        pre = net.forward_path(X)[0]
    assert middle_affine_rank(net, X) == centred_rank(pre[middle_layer(4) - 1])
    assert middle_affine_rank(net, X, rel=0.0) == min(6, 19)  # generic: full, N - 1 = 19


def test_affine_profile_reads_every_hidden_layer() -> None:
    net = FCNNConfig(depth=3, width=5).build(2, 1, seed=0, dtype=torch.float64)
    X = np.random.default_rng(0).standard_normal((40, 2))
    rows = affine_profile(net, X, 0.2)
    assert [r["layer"] for r in rows] == [1, 2]
    with torch.no_grad():
        pre, _ = net.forward_path(torch.as_tensor(X))
    for r, z in zip(rows, pre):
        s = centred_singular_values(z)
        assert r["affine_ratio"] == pytest.approx(float(s[1] / s[0]), rel=1e-12)
        assert r["affine_rank"] == centred_rank(z, 0.2)
    # the first layer's pre-activations W_1 x + b_1 of 2-D inputs span 2 affine dimensions
    assert rows[0]["affine_rank"] == 2


def test_random_middle_medians_of_each_draw() -> None:
    cfg = FCNNConfig(depth=4, width=6)
    X = np.random.default_rng(0).standard_normal((20, 3))
    build = lambda seed: cfg.build(3, 2, seed=seed, dtype=torch.float64)  # noqa: E731
    first, medians = random_middle_medians(build, [5, 6, 7], X, 2, 0.25)
    np.testing.assert_array_equal(first, layer_s_next(build(5), X, 2))
    assert medians == [middle_median(layer_s_next(build(s), X, 2), 0.25) for s in (5, 6, 7)]
    assert len(set(medians)) == 3  # different draws, different medians


def test_cor8_summary_compares_the_trained_median_with_untrained_ones() -> None:
    s_next = np.array([5.0, 1.0, 2.0, 3.0, 9.0])  # middle (p = 0.25): layers 2..3
    cor8 = {"s_next": s_next, "bound": 4.0, "layers_below": 3, "required": 2.5}
    out = cor8_summary(cor8, [2.0, 1.0, 3.0], 0.25)
    assert out["cor8_middle_median"] == 1.5 == middle_median(s_next, 0.25)
    assert out["cor8_middle_max"] == 2.0  # the ends (5, 3, 9) are outside the window
    assert out["cor8_middle_median_init"] == 2.0
    assert out["cor8_random_below"] == 1.0  # only 1.0 < 1.5
    assert out["cor8_middle_median_random_min"] == 1.0
    assert out["cor8_middle_median_random"] == 2.0
    assert (out["cor8_bound"], out["cor8_layers_below"], out["cor8_required"]) == (4.0, 3.0, 2.5)
