"""Paper 004's loss forms on FCNNs: weight = representation + null, representation =
covariance (random and trained, W~ != 0 and = 0), the one-step projector identity under GD,
the linear-net kernels, and the forces' closed form against autograd."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bottlenecklab import measure, theory
from bottlenecklab.measure._reformulation import (
    fcnn_forces,
    fcnn_layers,
    fcnn_linear_kernels,
    fcnn_reformulated_losses,
    null_norms,
    null_step_residual,
)
from bottlenecklab.models import FCNNConfig
from bottlenecklab.tasks import Dataset
from bottlenecklab.training import PhaseConfig, TrainConfig, train

F64 = torch.float64


def _data(N=8, d_in=10, d_out=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(N, d_in, generator=g, dtype=F64), torch.randn(
        N, d_out, generator=g, dtype=F64
    )


def _net(beta=1.0, slope=0.0, width=12, depth=3, d_in=10, d_out=3, seed=1, act="leaky_relu"):
    cfg = FCNNConfig(depth=depth, width=width, bias_scale=beta, slope=slope, activation=act)
    net = cfg.build(d_in, d_out, seed=seed, dtype=F64)
    with torch.no_grad():
        for b in net.biases:
            b.copy_(
                0.3 * torch.randn(b.shape, generator=torch.Generator().manual_seed(seed), dtype=F64)
            )
    return net


def _rel(a, b):
    return abs(a - b) / abs(b)


@pytest.mark.parametrize("beta", [0.0, 1.0])
@pytest.mark.parametrize("slope", [0.0, 0.1])
def test_forms_agree_random(beta, slope):
    X, Y = _data()
    out = fcnn_reformulated_losses(_net(beta, slope), X, Y, lam=0.1)
    assert out["null"] > 1e-3  # N = 8 < n_{l-1} + 1: W~ != 0
    assert _rel(out["representation"] + out["null"], out["weight"]) < 1e-8
    assert _rel(out["covariance"], out["representation"]) < 1e-8
    assert out["representation"] < out["weight"]  # App B: L^r < L when W~ != 0


def test_forms_agree_min_norm_part():
    """Psi(Phi(W)): the minimal-norm weights have W~ = 0 and L = L^r = L^k."""
    X, Y = _data()
    net = _net()
    with torch.no_grad():
        Zs, Z, _ = fcnn_layers(net, X)
        for l, (s, z) in enumerate(zip(Zs, Z)):
            W = theory.representation_weights(s, z)
            net.weights[l].copy_(W[:, :-1])
            net.biases[l].copy_(W[:, -1])
    out = fcnn_reformulated_losses(net, X, Y, lam=0.1)
    assert out["null"] < 1e-20
    assert _rel(out["representation"], out["weight"]) < 1e-8
    assert _rel(out["covariance"], out["weight"]) < 1e-8


def test_wrong_cutoff_breaks_identity():
    """Mismatched cut-offs (here: r = 0.5 in P_perp only) break the identity: it can fail."""
    X, Y = _data()
    net = _net()
    with torch.no_grad():
        Zs, Z, W = fcnn_layers(net, X)
        good = theory.reformulated_losses(Zs, Z, W, 0.0, 1.0)
        null_bad = sum(
            float((w @ theory.null_projector(s, 0.5)).pow(2).sum()) for s, w in zip(Zs, W)
        )
    assert _rel(good["representation"] + null_bad, good["weight"]) > 1e-3


def _trained(beta=1.0, steps=300):
    X, Y = _data()
    net = _net(beta)
    data = Dataset(X.numpy(), Y.numpy(), X.numpy(), Y.numpy())
    cfg = TrainConfig(lam=1e-2, phases=(PhaseConfig("adam", steps, 1e-2),), dtype="float64")
    train(net, data, cfg, progress=False)
    return net, X, Y


@pytest.mark.parametrize("beta", [0.0, 1.0])
def test_forms_agree_trained(beta):
    net, X, Y = _trained(beta)
    out = fcnn_reformulated_losses(net, X, Y, lam=1e-2)
    assert _rel(out["representation"] + out["null"], out["weight"]) < 1e-6
    assert _rel(out["covariance"], out["representation"]) < 1e-6


@pytest.mark.parametrize("beta", [0.0, 1.0])
def test_one_step_projector_identity(beta):
    X, Y = _data()
    assert null_step_residual(_net(beta), X, Y, lam=0.05, lr=0.05) < 1e-12


def test_first_layer_null_decays_geometrically():
    X, Y = _data()
    net = _net()
    before = null_norms(net, X)[0]
    data = Dataset(X.numpy(), Y.numpy(), X.numpy(), Y.numpy())
    eta, lam, T = 0.01, 0.05, 50
    cfg = TrainConfig(lam=lam, phases=(PhaseConfig("sgd", T, eta),), dtype="float64")
    train(net, data, cfg, progress=False)
    after = null_norms(net, X)[0]
    assert after / before == pytest.approx((1 - 2 * eta * lam) ** T, rel=1e-9)


def test_linear_kernels_trained():
    """K_l = X M^{l/L} X^T at a converged deep linear net (paper 004, §3.1)."""
    N, d_out = 6, 4
    g = torch.Generator().manual_seed(3)
    X = torch.randn(N, N, generator=g, dtype=F64)
    Y = torch.randn(N, d_out, generator=g, dtype=F64)
    net = FCNNConfig(depth=3, width=8, activation="identity", bias_scale=0.0).build(
        N, d_out, seed=4, dtype=F64
    )
    data = Dataset(X.numpy(), Y.numpy(), X.numpy(), Y.numpy())
    cfg = TrainConfig(lam=1e-3, phases=(PhaseConfig("lbfgs", 3000, 1.0),), dtype="float64")
    train(net, data, cfg, progress=False)
    # the trainer's L-BFGS stops near 1e-7 (torch's tolerance_grad): the gate is 1e-7
    assert measure.gradient_norm(net, X, Y, 1e-3) < 1e-7
    measured, formula = fcnn_linear_kernels(net, X)
    for K, F in zip(measured, formula):
        assert float((K - F).norm() / F.norm()) < 1e-4


def test_forces_match_autograd():
    """A_l and R_l are the Z_l-gradients of lam Tr[K_l G_{l-1}] and lam Tr[K_{l+1} G_l]."""
    X, _ = _data()
    net = _net(slope=0.1)
    lam = 0.3
    (A, R), _ = fcnn_forces(net, X, lam)
    with torch.no_grad():
        Zs, Z, W = fcnn_layers(net, X)
    Z1 = Z[0].clone().requires_grad_(True)
    beta = torch.ones(X.shape[0], 1, dtype=F64)
    S1 = torch.cat([net.act(Z1), beta], dim=1)
    Z2 = S1 @ W[1].T
    G0 = theory.ridge(Zs[0] @ Zs[0].T)
    Ks = (S1 @ S1.T).detach()
    G1 = theory.ridge(Ks)  # eps held fixed (the Decision's eps is a constant per kernel)
    eps = float(torch.linalg.inv(G1)[0, 0] - Ks[0, 0])
    att = lam * torch.trace(Z1 @ Z1.T @ G0)
    rep = lam * torch.trace(
        Z2.detach() @ Z2.detach().T @ torch.linalg.inv(S1 @ S1.T + eps * torch.eye(8, dtype=F64))
    )
    gA = torch.autograd.grad(att, Z1)[0]
    gR = torch.autograd.grad(rep, Z1)[0]
    assert torch.allclose(A, gA, rtol=1e-7, atol=1e-10 * float(gA.abs().max()))
    assert torch.allclose(R, gR, rtol=1e-6, atol=1e-9 * float(gR.abs().max()))
    assert np.isfinite(float(A.norm()))
