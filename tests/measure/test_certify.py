"""The convergence certificate on problems with known answers (spec `convergence.md`)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from torch import nn

from bottlenecklab.measure import certify, clarke_critical_point_residuals, leaky_resnet_layers
from bottlenecklab.measure import critical_point_residuals as cp_residuals
from bottlenecklab.models import FCNNConfig, LeakyResNetConfig
from bottlenecklab.tasks import TeacherConfig
from bottlenecklab.training import PhaseConfig, TrainConfig, train

EPS = torch.finfo(torch.float64).eps


def _ridge_data(n: int = 40, d: int = 4, k: int = 2):
    g = torch.Generator().manual_seed(0)
    X = torch.randn(n, d, generator=g, dtype=torch.float64)
    Y = torch.randn(n, k, generator=g, dtype=torch.float64)
    return X, Y


def _ridge_solution(X: torch.Tensor, Y: torch.Tensor, lam: float) -> tuple[torch.Tensor, float]:
    """Minimizer `[W b]` of `(1/N)||Y - X W^T - b||^2 + lam ||[W b]||^2`, and its condition."""
    Z = torch.cat([X, torch.ones(len(X), 1, dtype=X.dtype)], 1)
    M = Z.T @ Z / len(X) + lam * torch.eye(Z.shape[1], dtype=X.dtype)
    theta = torch.linalg.solve(M, Z.T @ Y / len(X)).T  # [k, d+1]
    return theta, float(torch.linalg.cond(M))


@pytest.mark.parametrize("at_optimum", [False, True])
def test_smooth_ridge_stationarity_is_the_relative_gradient_norm(at_optimum: bool) -> None:
    X, Y = _ridge_data()
    lam = 0.1
    net = nn.Linear(X.shape[1], Y.shape[1]).double()
    if at_optimum:
        theta, cond = _ridge_solution(X, Y, lam)
        with torch.no_grad():
            net.weight.copy_(theta[:, :-1])
            net.bias.copy_(theta[:, -1])
    cert = certify(net, (X, Y), lam)
    assert cert.kinks == () and cert.iterations == 0
    assert cert.stationarity == cert.smooth_stationarity
    assert cert.stationarity == pytest.approx(cert.grad_norm / cert.reg_force, rel=1e2 * EPS)
    if at_optimum:
        assert cert.stationarity <= 1e2 * EPS * cond and cert.converged
    else:
        assert cert.stationarity > 1.0 and not cert.converged


class KinkMinimum(nn.Module):
    """`f(x) = leaky(theta x) + 2 leaky(-theta x) + b + 1`: on `x = 1, y = 0` with weight
    decay, the minimum is at `theta = 0` (a kink of both calls), `b = -1/(1 + lam)`."""

    def __init__(self, lam: float, slope: float) -> None:
        super().__init__()
        self.slope = slope
        self.theta = nn.Parameter(torch.zeros(1, dtype=torch.float64))
        self.b = nn.Parameter(torch.full((1,), -1.0 / (1.0 + lam), dtype=torch.float64))

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        z = X * self.theta
        a = self.slope
        return nn.functional.leaky_relu(z, a) + 2 * nn.functional.leaky_relu(-z, a) + self.b + 1


@pytest.mark.parametrize("slope", [0.1, 0.25, 0.5])
def test_minimum_on_a_kink_is_certified_although_the_gradient_stays(slope: float) -> None:
    lam = 0.3
    net = KinkMinimum(lam, slope)
    X = torch.ones(1, 1, dtype=torch.float64)
    Y = torch.zeros(1, 1, dtype=torch.float64)
    cert = certify(net, (X, Y), lam)
    assert cert.kinks == (1, 1)
    # autograd's derivative `a` at both kinks: d theta = 2 r (a - 2a) with r = lam/(1+lam)
    r = lam / (1 + lam)
    assert cert.grad_norm == pytest.approx(2 * r * slope, rel=1e2 * EPS)
    assert cert.smooth_stationarity > 0.1
    assert cert.stationarity <= 1e3 * EPS and cert.converged


@pytest.mark.parametrize("slope", [0.1, 0.5])
def test_the_selected_derivatives_replay_the_smallest_generalized_gradient(slope) -> None:
    """`cert.derivatives` is the selection behind `stationarity`: the gradient computed
    with it (`KinkDerivatives.mode`) has exactly that relative norm."""
    lam = 0.3
    net = KinkMinimum(lam, slope)
    X, Y = torch.ones(1, 1, dtype=torch.float64), torch.zeros(1, 1, dtype=torch.float64)
    cert = certify(net, (X, Y), lam)
    with cert.derivatives.mode():
        loss = nn.functional.mse_loss(net(X), Y) + lam * sum(
            p.pow(2).sum() for p in net.parameters()
        )
    g = torch.autograd.grad(loss, list(net.parameters()))
    norm = float(torch.cat([t.reshape(-1) for t in g]).norm())
    assert norm / cert.reg_force == pytest.approx(cert.stationarity, abs=1e3 * EPS)
    assert [t.numel() for t in cert.derivatives.s] == list(cert.kinks)
    assert all(float(t.min()) >= 0.0 and float(t.max()) <= 1.0 for t in cert.derivatives.s)


def test_moving_off_the_kink_is_not_certified() -> None:
    lam = 0.3
    net = KinkMinimum(lam, 0.25)
    with torch.no_grad():
        net.theta.fill_(0.05)  # no kink any more, and not a critical point
    X, Y = torch.ones(1, 1, dtype=torch.float64), torch.zeros(1, 1, dtype=torch.float64)
    cert = certify(net, (X, Y), lam)
    assert sum(cert.kinks) == 0 and not cert.converged


def _trained_fcnn(steps: int):
    data = TeacherConfig(dims=(5, 2, 5), hidden=8, n_train=40, n_test=10).build(seed=0)
    net = FCNNConfig(depth=3, width=12).build(data.d_in, data.d_out, seed=1, dtype=torch.float64)
    phases = (PhaseConfig("adam", steps, 1e-2), PhaseConfig("lbfgs", steps, 1.0))
    train(net, data, TrainConfig(lam=1e-2, dtype="float64", phases=phases, log_every=50))
    return net, data


def test_an_untrained_network_fails_the_certificate() -> None:
    data = TeacherConfig(dims=(5, 2, 5), hidden=8, n_train=40, n_test=10).build(seed=0)
    net = FCNNConfig(depth=3, width=12).build(data.d_in, data.d_out, seed=1, dtype=torch.float64)
    cert = certify(net, data, 1e-2)
    assert cert.stationarity > 1.0 and not cert.converged


def test_training_lowers_the_certificate_and_row_order_does_not_change_it() -> None:
    net, data = _trained_fcnn(300)
    cert = certify(net, data, 1e-2)
    untrained = FCNNConfig(depth=3, width=12).build(data.d_in, data.d_out, seed=1)
    assert cert.stationarity < certify(untrained, data, 1e-2).stationarity / 10
    perm = np.random.default_rng(0).permutation(len(data.x_train))
    shuffled = certify(net, (data.x_train[perm], data.y_train[perm]), 1e-2)
    assert shuffled.kinks == cert.kinks or sum(shuffled.kinks) == sum(cert.kinks)
    # Sums over samples in another order: equal to round-off relative to the force.
    tol = 1e3 * EPS * cert.grad_norm / cert.reg_force + 1e3 * EPS
    assert shuffled.stationarity == pytest.approx(cert.stationarity, abs=max(tol, 1e-9))


def _leaky_net_with_a_kink():
    """A small leaky ResNet whose layer-1 representation has an exact zero row (input row 0
    is 0 and layer 1 has no bias), so `relu(A_1)` has kinks that `B_1` sees."""
    data = TeacherConfig(dims=(5, 2, 5), hidden=8, n_train=30, n_test=10).build(seed=0)
    net = LeakyResNetConfig(width=6, depth=4, leak=1.0).build(
        data.d_in, data.d_out, seed=0, dtype=torch.float64
    )
    with torch.no_grad():
        net.weights[0, :, -1] = 0.0
    X = np.array(data.x_train, copy=True)
    X[0] = 0.0
    return net, X, data.y_train


def test_clarke_residual_never_exceeds_the_plain_one() -> None:
    net, X, Y = _leaky_net_with_a_kink()
    plain = cp_residuals(net, X, Y, 0.1)
    clarke = clarke_critical_point_residuals(net, X, Y, 0.1)
    assert np.all(clarke <= plain * (1 + 1e2 * EPS))
    # Only layer 1's momentum passes through the kinks of relu(A_1); later layers' do not.
    np.testing.assert_allclose(clarke[1:], plain[1:], rtol=1e2 * EPS)


def test_clarke_residual_does_not_depend_on_how_it_is_solved(monkeypatch) -> None:
    """The exact solve in layer chunks (one layer at a time) gives the all-layers result;
    the L-BFGS-B route (beyond `MAX_EXACT` kinks) reaches it within its tolerance."""
    from bottlenecklab.measure import _hamiltonian

    net, X, Y = _leaky_net_with_a_kink()
    whole = clarke_critical_point_residuals(net, X, Y, 0.1)
    monkeypatch.setattr(_hamiltonian, "CLARKE_EXACT", 1)
    np.testing.assert_allclose(
        clarke_critical_point_residuals(net, X, Y, 0.1), whole, rtol=1e4 * EPS
    )
    monkeypatch.setattr(_hamiltonian, "MAX_EXACT", 0)
    iterative = clarke_critical_point_residuals(net, X, Y, 0.1)
    np.testing.assert_allclose(iterative, whole, rtol=1e-6, atol=1e-8)


def test_clarke_momenta_do_not_jump_with_the_sign_of_a_kink() -> None:
    """A kink entry's sign at round-off level (a 1e-14 bias, either sign) flips autograd's
    `sigma'`, and with it layer 1's `H` (`rank_H_autograd`); the momenta of the certificate's
    selection (`clarke=True`) give the same `H` both ways."""
    net, X, Y = _leaky_net_with_a_kink()
    tables = []
    for sign in (1.0, -1.0):
        n = copy.deepcopy(net)
        with torch.no_grad():
            n.weights[0, :, -1] = sign * 1e-14
        tables.append(leaky_resnet_layers(n, X, Y, 0.1, clarke=True))
    auto = [t.column("rank_H_autograd")[0] for t in tables]
    clarke = [t.column("rank_H")[0] for t in tables]
    assert abs(auto[0] - auto[1]) > 1e-3 * max(abs(a) for a in auto)
    assert clarke[0] == pytest.approx(clarke[1], rel=1e6 * EPS)


def test_clarke_residual_equals_the_plain_one_without_kinks() -> None:
    data = TeacherConfig(dims=(5, 2, 5), hidden=8, n_train=30, n_test=10).build(seed=0)
    net = LeakyResNetConfig(width=6, depth=4, leak=1.0).build(
        data.d_in, data.d_out, seed=0, dtype=torch.float64
    )
    plain = cp_residuals(net, data.x_train, data.y_train, 0.1)
    clarke = clarke_critical_point_residuals(net, data.x_train, data.y_train, 0.1)
    np.testing.assert_allclose(clarke, plain, rtol=1e2 * EPS)  # two code paths: round-off


@pytest.mark.parametrize(
    "make",
    [
        lambda: nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 1)),
        lambda: nn.Sequential(nn.Linear(3, 5), nn.LeakyReLU(0.1), nn.Linear(5, 1)),
    ],
    ids=["relu-module", "leaky-module"],
)
def test_any_module_with_relu_calls_is_supported(make) -> None:
    torch.manual_seed(0)
    net = make().double()
    X = torch.randn(20, 3, dtype=torch.float64)
    cert = certify(net, (X, torch.zeros(20, 1, dtype=torch.float64)), 1e-3)
    assert cert.entries == (100,)  # one nonlinearity call found, N x width entries


def test_functional_relu_in_a_custom_forward_is_found() -> None:
    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a = nn.Linear(3, 4)
            self.b = nn.Linear(4, 1)

        def forward(self, x):
            return self.b(torch.relu(self.a(x)) + nn.functional.relu(self.a(x)).relu())

    net = Net().double()
    X = torch.randn(10, 3, dtype=torch.float64)
    cert = certify(net, (X, torch.zeros(10, 1, dtype=torch.float64)), 1e-3)
    assert len(cert.kinks) == 3


def test_a_network_measured_twice_is_certified_once() -> None:
    """`certify` keeps its last results for the library's models: the same network, data
    and settings return the same record; a changed weight or setting computes anew."""
    net, X, Y = _leaky_net_with_a_kink()
    first = certify(net, (X, Y), 0.1)
    assert certify(net, (X, Y), 0.1).derivatives is first.derivatives  # not recomputed
    again = certify(net, (X, Y), 0.1, threshold=1e-9)  # the verdict's threshold only
    assert again.stationarity == first.stationarity and again.threshold == 1e-9
    assert not again.converged
    assert certify(net, (X, Y), 0.2).derivatives is not first.derivatives
    with torch.no_grad():
        net.weights[1, 0, 0] += 1e-3
    assert certify(net, (X, Y), 0.1).derivatives is not first.derivatives
