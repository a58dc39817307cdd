"""Deep fully-connected network (papers 001/004): forward pass and `lam ||theta||^2`."""

from __future__ import annotations

import pytest
import torch

from bottlenecklab.config import ConfigError
from bottlenecklab.models import FCNN, FCNNConfig, leaky_relu

D_IN, D_OUT = 3, 2


def _net(**kw) -> FCNN:
    net = FCNNConfig(**{"depth": 4, "width": 6, **kw}).build(
        D_IN, D_OUT, seed=2, dtype=torch.float64
    )
    with torch.no_grad():  # non-zero biases so that they count in every formula
        for b in net.biases:
            b.copy_(torch.linspace(-1, 1, b.numel(), dtype=torch.float64))
    return net


def _x() -> torch.Tensor:
    return torch.randn(7, D_IN, generator=torch.Generator().manual_seed(0), dtype=torch.float64)


@pytest.mark.parametrize("slope", [0.0, 0.3, -0.5])
def test_leaky_relu(slope):
    x = torch.tensor([-2.0, -0.5, 0.0, 1.5])
    expected = torch.tensor([-2.0 * slope, -0.5 * slope, 0.0, 1.5])
    torch.testing.assert_close(leaky_relu(x, slope), expected)


@pytest.mark.parametrize("depth", [1, 2, 5])
def test_shapes(depth):
    net = _net(depth=depth)
    sizes = [D_IN] + [6] * (depth - 1) + [D_OUT]
    assert [tuple(W.shape) for W in net.weights] == list(zip(sizes[1:], sizes[:-1]))
    pre, post = net.forward_path(_x())
    assert len(pre) == depth and len(post) == depth
    assert net(_x()).shape == (7, D_OUT)


@pytest.mark.parametrize(
    "activation, slope", [("leaky_relu", 0.0), ("leaky_relu", 0.2), ("identity", 0.0)]
)
@pytest.mark.parametrize("bias_scale", [0.0, 1.0, 2.5])
def test_forward_matches_a_naive_loop(activation, slope, bias_scale):
    """`a~_l = a_{l-1} W_l^T + beta b_l`, `a_l = sigma_a(a~_l)`, output `a~_L`."""
    net = _net(activation=activation, slope=slope, bias_scale=bias_scale)
    X = _x()
    a = X
    for l, (W, b) in enumerate(zip(net.weights, net.biases)):
        z = a @ W.T + bias_scale * b
        if l < net.depth - 1:
            a = z if activation == "identity" else torch.where(z >= 0, z, slope * z)
    torch.testing.assert_close(net(X), z, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("depth", [1, 3])
def test_regularization_is_lam_times_squared_norm_with_biases(depth):
    net = _net(depth=depth)
    lam = 0.07
    expected = lam * sum(
        float((W.detach() ** 2).sum()) + float((b.detach() ** 2).sum())
        for W, b in zip(net.weights, net.biases)
    )
    assert float(net.regularization(lam).detach()) == pytest.approx(expected, rel=1e-12)
    assert float(net.param_norm_sq().detach()) == pytest.approx(expected / lam, rel=1e-12)


def test_he_init_scale():
    net = FCNNConfig(depth=2, width=400, init="he").build(200, 3, seed=0, dtype=torch.float64)
    assert float(net.weights[0].detach().std()) == pytest.approx((2 / 200) ** 0.5, rel=0.05)


def test_normal_init_uses_absolute_std():
    net = FCNNConfig(depth=2, width=300, init="normal", init_scale=0.01).build(50, 3, seed=0)
    assert float(net.weights[0].detach().std()) == pytest.approx(0.01, rel=0.05)


def test_never_adapts():
    assert _net().adapt_every == 0


@pytest.mark.parametrize(
    "field, value",
    [
        ("depth", 0),
        ("width", 0),
        ("slope", 1.0),
        ("slope", -1.0),
        ("bias_scale", -1.0),
        ("init_scale", -1.0),
    ],
)
def test_config_rejects_out_of_range(field, value):
    with pytest.raises(ConfigError, match=field):
        FCNNConfig(**{field: value})
