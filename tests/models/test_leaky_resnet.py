"""Leaky ResNet (paper 000, §1): forward pass, regularizer, lift, initialization, warnings."""

from __future__ import annotations

import warnings

import pytest
import torch

from bottlenecklab.config import ConfigError
from bottlenecklab.models import LeakyResNet, LeakyResNetConfig, sigma
from bottlenecklab.tasks import Dataset
from bottlenecklab.training import PhaseConfig, TrainConfig, train

D_IN, D_OUT = 3, 2


def _net(**kw) -> LeakyResNet:
    base = dict(width=5, depth=4, leak=1.5, init_scale=0.7)
    base.update(kw)
    return LeakyResNetConfig(**base).build(D_IN, D_OUT, seed=3, dtype=torch.float64)


def _x(n: int = 9, d: int = D_IN) -> torch.Tensor:
    return torch.randn(n, d, generator=torch.Generator().manual_seed(0), dtype=torch.float64)


def test_sigma_appends_a_constant_column():
    A = torch.tensor([[-1.0, 2.0], [3.0, -4.0]])
    torch.testing.assert_close(sigma(A), torch.tensor([[0.0, 2.0, 1.0], [3.0, 0.0, 1.0]]))


@pytest.mark.parametrize("leak", [0.0, 1.5, 3.0])
@pytest.mark.parametrize("schedule", ["equidistant", "irregular"])
@pytest.mark.parametrize("init", ["fixed_point", "random"])
def test_forward_path_matches_the_layer_formula(leak, schedule, init):
    """`A_l = (1 - rho_l L~) A_{l-1} + rho_l sigma(A_{l-1}) W_l^T`, `A_0 = X Pin^T`."""
    net = _net(leak=leak, schedule=schedule, init=init)
    X = _x()
    path = net.forward_path(X)
    A = X @ net.pin.T
    expected = [A]
    for l in range(net.depth):
        r = float(net.rho[l])
        S = torch.cat([torch.relu(A), torch.ones(A.shape[0], 1, dtype=A.dtype)], dim=1)
        A = (1 - r * leak) * A + r * S @ net.weights[l].T
        expected.append(A)
    assert len(path) == net.depth + 1
    for got, want in zip(path, expected):
        torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(net(X), expected[-1] @ net.pout.T, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("leak", [0.5, 2.0, 4.0])
@pytest.mark.parametrize("schedule", ["equidistant", "irregular"])
def test_regularization_coefficient(leak, schedule):
    """`(lam / (2 L~)) sum_l rho_l ||W_l||_F^2` (paper 000, Eq. 2)."""
    net = _net(leak=leak, schedule=schedule, depth=6)
    lam = 0.03
    expected = sum(
        float(net.rho[l]) * float((net.weights[l].detach() ** 2).sum()) for l in range(net.depth)
    ) * (lam / (2 * leak))
    assert float(net.regularization(lam).detach()) == pytest.approx(expected, rel=1e-12)


def test_regularization_plain_resnet_uses_lam_over_two():
    """**Decision** for `L~ = 0`: the coefficient is `lam / 2`."""
    net = _net(leak=0.0, schedule="irregular")
    lam = 0.1
    expected = (
        lam
        / 2
        * sum(
            float(net.rho[l]) * float((net.weights[l].detach() ** 2).sum())
            for l in range(net.depth)
        )
    )
    assert float(net.regularization(lam).detach()) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("leak", [0.0, 2.0])
def test_regularization_learned_lift_adds_lam_over_two_norms(leak):
    fixed, learned = _net(leak=leak), _net(leak=leak, lift="learned")
    lam = 0.05
    extra = (
        lam
        / 2
        * (float((learned.pin.detach() ** 2).sum()) + float((learned.pout.detach() ** 2).sum()))
    )
    assert float(learned.regularization(lam).detach()) == pytest.approx(
        float(fixed.regularization(lam).detach()) + extra, rel=1e-12
    )


def test_regularization_is_differentiable():
    net = _net()
    net.regularization(0.1).backward()
    assert net.weights.grad is not None
    # d/dW_l of (lam/(2L~)) rho_l ||W_l||^2 = (lam/L~) rho_l W_l
    expected = (0.1 / 1.5) * net.rho[:, None, None] * net.weights.detach()
    torch.testing.assert_close(net.weights.grad, expected)


@pytest.mark.parametrize("width, d_in, d_out", [(6, 3, 2), (3, 5, 4), (4, 4, 4)])
def test_fixed_lift_has_orthonormal_columns_or_rows(width, d_in, d_out):
    net = LeakyResNetConfig(width=width, depth=2, leak=1.0).build(d_in, d_out, seed=0)
    for M in (net.pin.double(), net.pout.double()):
        gram = M.T @ M if M.shape[0] >= M.shape[1] else M @ M.T
        torch.testing.assert_close(
            gram, torch.eye(gram.shape[0], dtype=torch.float64), atol=1e-6, rtol=0
        )
    assert net.pin.shape == (width, d_in) and net.pout.shape == (d_out, width)


def test_fixed_lift_is_not_a_parameter_and_not_trained(tiny_data: Dataset):
    net = LeakyResNetConfig(width=5, depth=3, leak=1.0).build(
        tiny_data.d_in, tiny_data.d_out, seed=0, dtype=torch.float64
    )
    names = {n for n, _ in net.named_parameters()}
    assert names == {"weights"}
    pin, pout = net.pin.clone(), net.pout.clone()
    w0 = net.weights.detach().clone()
    cfg = TrainConfig(lam=0.01, phases=(PhaseConfig("adam", 5, 1e-2),), dtype="float64")
    train(net, tiny_data, cfg, progress=False)
    assert torch.equal(net.pin, pin) and torch.equal(net.pout, pout)
    assert not torch.equal(net.weights.detach(), w0)
    assert {"pin", "pout", "rho"} <= set(net.state_dict())


def test_learned_lift_is_trained(tiny_data: Dataset):
    net = LeakyResNetConfig(width=5, depth=3, leak=1.0, lift="learned").build(
        tiny_data.d_in, tiny_data.d_out, seed=0, dtype=torch.float64
    )
    assert {n for n, _ in net.named_parameters()} == {"weights", "pin", "pout"}
    pin = net.pin.detach().clone()
    cfg = TrainConfig(lam=0.01, phases=(PhaseConfig("adam", 5, 1e-2),), dtype="float64")
    train(net, tiny_data, cfg, progress=False)
    assert not torch.equal(net.pin.detach(), pin)


def test_build_is_seeded():
    cfg = LeakyResNetConfig(width=4, depth=3, leak=1.0)
    a, b, c = (cfg.build(3, 2, seed=s) for s in (5, 5, 6))
    assert torch.equal(a.weights, b.weights) and torch.equal(a.pin, b.pin)
    assert not torch.equal(a.weights, c.weights)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_build_dtype(dtype):
    net = LeakyResNetConfig(width=4, depth=3, leak=1.0).build(3, 2, dtype=dtype)
    assert net.weights.dtype == dtype and net.pin.dtype == dtype and net.rho.dtype == dtype


def test_fixed_point_init_keeps_nonnegative_representations():
    """With `W_l = L~ [I, 0]` (no noise) a non-negative `A` is a fixed point of every layer."""
    net = _net(leak=2.0, init="fixed_point", init_scale=0.0, width=D_IN)
    X = _x().abs() @ net.pin  # A_0 = X Pin^T = |x| >= 0 (Pin is square orthogonal)
    path = net.forward_path(X)
    for A in path[1:]:
        torch.testing.assert_close(A, path[0], rtol=1e-12, atol=1e-12)


def test_fixed_point_init_is_leak_times_identity_plus_noise():
    net = _net(leak=2.0, init="fixed_point", init_scale=0.0)
    w = net.cfg.width
    expected = torch.zeros(w, w + 1, dtype=torch.float64)
    expected[:, :w] = 2.0 * torch.eye(w)
    for l in range(net.depth):
        torch.testing.assert_close(net.weights[l].detach(), expected)


def test_random_init_scale():
    net = LeakyResNetConfig(width=40, depth=5, leak=1.0, init="random", init_scale=1.0).build(
        3, 2, dtype=torch.float64
    )
    # std 1/sqrt(w+1) per entry
    assert float(net.weights.detach().std()) == pytest.approx(1 / 41**0.5, rel=0.05)


@pytest.mark.parametrize("depth, leak", [(2, 4.0), (4, 4.0), (1, 1.0), (3, 5.0)])
def test_warns_when_a_step_times_leak_reaches_one(depth, leak):
    with pytest.warns(UserWarning, match="layer step times leak"):
        LeakyResNetConfig(width=3, depth=depth, leak=leak).build(2, 2)


@pytest.mark.parametrize("depth, leak", [(5, 4.0), (10, 9.0), (2, 0.0)])
def test_no_warning_when_steps_are_small(depth, leak):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        LeakyResNetConfig(width=3, depth=depth, leak=leak).build(2, 2)


def test_irregular_schedule_warning_uses_the_largest_step():
    """Equidistant `rho L~ = 0.9 < 1`, but the irregular middle step is larger than `1/L`."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        LeakyResNetConfig(width=3, depth=10, leak=9.0).build(2, 2)
    with pytest.warns(UserWarning, match="layer step times leak"):
        LeakyResNetConfig(width=3, depth=10, leak=9.0, schedule="irregular").build(2, 2)


def test_adaptive_update_renormalizes_and_changes_steps():
    net = _net(schedule="adaptive", init="random", leak=0.5)
    assert net.adapt_every == net.cfg.adaptive_every
    before = net.rho.clone()
    net.adapt(_x())
    assert float(net.rho.sum()) == pytest.approx(1.0, abs=1e-12)
    assert bool((net.rho > 0).all()) and not torch.equal(net.rho, before)


@pytest.mark.parametrize("schedule", ["equidistant", "irregular"])
def test_fixed_schedules_never_adapt(schedule):
    assert _net(schedule=schedule).adapt_every == 0


@pytest.mark.parametrize(
    "field, value",
    [
        ("width", 0),
        ("width", -3),
        ("depth", 0),
        ("leak", -1.0),
        ("leak", float("inf")),
        ("irregular_a", 1.0),
        ("adaptive_every", 0),
        ("adaptive_damping", 0.0),
        ("adaptive_damping", 1.5),
        ("init_scale", -0.1),
    ],
)
def test_config_rejects_out_of_range(field, value):
    with pytest.raises(ConfigError, match=field):
        LeakyResNetConfig(**{field: value})


@pytest.mark.parametrize("leak", [0.5, 4.0])
def test_fixed_point_noise_is_relative_to_the_leak(leak):
    cfg = LeakyResNetConfig(width=60, depth=8, leak=leak, init="fixed_point", init_scale=0.1)
    W = cfg.build(3, 3, seed=0, dtype=torch.float64).weights.detach()
    noise = W.clone()
    noise[:, :, :60] -= leak * torch.eye(60, dtype=torch.float64)
    expected = 0.1 * leak / (61**0.5)
    assert abs(float(noise.std()) / expected - 1) < 0.02


@pytest.mark.parametrize("damping", [1.0, 0.3])
def test_adapt_equals_the_update_from_the_whole_path(damping):
    """The one-pass `adapt` gives `adaptive_steps(forward_path(X))` (float64)."""
    from bottlenecklab.models import adaptive_steps

    net = _net(schedule="adaptive", init="random", leak=0.5, adaptive_damping=damping)
    net = net.to(torch.float64)
    X = _x().to(torch.float64)
    expected = adaptive_steps(net.forward_path(X), net.rho, damping)
    net.adapt(X)
    torch.testing.assert_close(net.rho, expected, rtol=1e-12, atol=1e-14)


def test_steps_from_the_training_forward_equal_a_separate_adapt_pass():
    """`record_step_norms` + forward + `adapt_recorded` gives exactly the steps of
    `adapt(X)` on the same weights (the same reductions), and leaves outputs unchanged."""
    a = _net(schedule="adaptive", init="random", leak=0.5)
    b = _net(schedule="adaptive", init="random", leak=0.5)
    X = _x()
    a.adapt(X)
    b.record_step_norms()
    out = b(X)
    b.adapt_recorded()
    assert torch.equal(a.rho, b.rho)
    b.rho.copy_(a.rho.new_full(a.rho.shape, 1.0 / a.depth))
    assert torch.equal(out, b(X))  # recording does not change the forward
    with pytest.raises(RuntimeError, match="record_step_norms"):
        b.adapt_recorded()  # the norms are used once
