"""The circular CNN (full-size kernels by FFT) of paper 002's Newtonian experiment."""

from __future__ import annotations

import pytest
import torch

from bottlenecklab.config import ConfigError
from bottlenecklab.models import CircularCNNConfig
from bottlenecklab.tasks import BallGravityConfig
from bottlenecklab.training import PhaseConfig, TrainConfig, train


def _direct(K: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
    """`(K (*) a)[o, x] = sum_c sum_q K[o, c, q] a[c, x - q]` by explicit rolls."""
    n = a.shape[-1]
    out = torch.zeros(a.shape[0], K.shape[0], n, n, dtype=a.dtype)
    for q1 in range(n):
        for q2 in range(n):
            shifted = torch.roll(a, shifts=(q1, q2), dims=(2, 3))  # a[c, x - q]
            out += torch.einsum("oc,ncxy->noxy", K[:, :, q1, q2], shifted)
    return out


def test_forward_is_the_circular_convolution():
    cfg = CircularCNNConfig(depth=2, channels=3, size=5)
    net = cfg.build(2 * 25, 25, seed=0, dtype=torch.float64)
    with torch.no_grad():
        net.biases[0].normal_()
        net.biases[1].normal_()
    X = torch.randn(4, 50, dtype=torch.float64)
    a0 = X.reshape(4, 2, 5, 5)
    z1 = _direct(net.kernels[0], a0) + net.biases[0][:, None, None]
    z2 = _direct(net.kernels[1], torch.relu(z1)) + net.biases[1][:, None, None]
    assert torch.allclose(net(X), z2.reshape(4, -1), atol=1e-12)
    pre, post = net.forward_path(X)
    assert len(pre) == 2 and len(post) == 2 and torch.allclose(pre[0], z1, atol=1e-12)


def test_regularization_counts_kernels_and_biases():
    net = CircularCNNConfig(depth=3, channels=2, size=4).build(16, 16, dtype=torch.float64)
    total = sum(float(p.detach().pow(2).sum()) for p in net.parameters())
    assert float(net.regularization(0.5)) == pytest.approx(0.5 * total, rel=1e-12)


def test_trains_with_the_library_loop():
    data = BallGravityConfig(size=6, sigma=1.0, n_train=16, n_test=4).build(seed=0)
    net = CircularCNNConfig(depth=2, channels=2, size=6).build(data.d_in, data.d_out, seed=1)
    res = train(
        net, data, TrainConfig(lam=1e-4, phases=(PhaseConfig("adam", 30, 1e-2),), log_every=10)
    )
    assert res.metrics[-1]["loss"] < res.metrics[0]["loss"]


def test_bad_shapes_fail():
    with pytest.raises(ConfigError):
        CircularCNNConfig(size=4).build(17, 16)
