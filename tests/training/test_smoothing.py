"""Smoothed phases (`PhaseConfig.smooth`): softplus in place of every ReLU call while the
phase trains, the exact network in every metrics row and at the end."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from bottlenecklab.config import ConfigError
from bottlenecklab.measure import regularized_loss
from bottlenecklab.models import FCNNConfig
from bottlenecklab.training import PhaseConfig, SmoothReLU, TrainConfig, smooth_leaky_relu, train
from bottlenecklab.training._objective import Objective

EPS = torch.finfo(torch.float64).eps


def _fcnn(data, **kw):
    cfg = FCNNConfig(**{"depth": 3, "width": 6, **kw})
    return cfg.build(data.d_in, data.d_out, seed=1, dtype=torch.float64)


@pytest.mark.parametrize("slope", [0.0, 0.2])
@pytest.mark.parametrize("beta", [1.0, 30.0, 1e4])
def test_softplus_is_within_its_bound_of_the_leaky_relu(beta, slope):
    z = torch.linspace(-5, 5, 2001, dtype=torch.float64)
    gap = smooth_leaky_relu(z, beta, slope) - F.leaky_relu(z, slope)
    bound = (1 - slope) * math.log(2) / beta
    assert float(gap.min()) >= -64 * EPS  # softplus lies above the kink
    assert float(gap.max()) == pytest.approx(bound, rel=1e-9)  # attained at z = 0


def test_the_mode_smooths_every_relu_call_and_counts_them():
    z = torch.tensor([-1.0, 0.0, 2.0], dtype=torch.float64)
    with SmoothReLU(10.0) as mode:
        outs = [torch.relu(z), F.relu(z), z.relu(), F.leaky_relu(z, 0.1), F.leaky_relu(z)]
        plain = torch.tanh(z)
    assert mode.calls == 5
    want = F.softplus(z, beta=10.0)
    for out in outs[:3]:
        torch.testing.assert_close(out, want, rtol=0, atol=0)
    torch.testing.assert_close(outs[3], 0.1 * z + 0.9 * want, rtol=1e-15, atol=0)
    torch.testing.assert_close(outs[4], 0.01 * z + 0.99 * want, rtol=1e-15, atol=0)
    torch.testing.assert_close(plain, torch.tanh(z))  # other calls untouched
    with pytest.raises(RuntimeError, match="in-place"), SmoothReLU(10.0):
        torch.relu_(z.clone())
    with pytest.raises(ValueError):
        SmoothReLU(0.0)


def test_the_objective_trains_the_smoothed_loss_but_logs_the_exact_one(tiny_data):
    net = _fcnn(tiny_data)
    obj = Objective(net, tiny_data, "mse", 0.01, torch.float64, "cpu")
    exact = float(obj.loss().detach())
    obj.smooth = 5.0
    smoothed = float(obj.loss().detach())
    assert smoothed > exact  # softplus > relu everywhere: a different loss
    row = obj.row("lbfgs", 1.0)
    assert row["loss"] == pytest.approx(exact, rel=1e-14)
    assert obj.smooth == 5.0


def test_a_leaky_resnet_is_smoothed_through_its_plain_loop(tiny_data, tiny_net):
    """The fused stack makes no leaky-ReLU call: a smoothed phase of any optimizer trains
    the softplus network through `forward_twice_differentiable`, and the rows stay exact."""
    obj = Objective(tiny_net, tiny_data, "mse", 0.01, torch.float64, "cpu")
    exact = float(obj.loss().detach())
    obj.smooth = 5.0
    with SmoothReLU(5.0) as mode:
        by_hand = F.mse_loss(tiny_net.forward_twice_differentiable(obj.X), obj.Y, reduction="sum")
    by_hand = by_hand.detach()
    assert mode.calls == tiny_net.depth
    want = float(by_hand) / obj.n + float(tiny_net.regularization(0.01).detach())
    assert float(obj.loss().detach()) == pytest.approx(want, rel=1e-12)
    assert abs(want - exact) > 1e3 * EPS * abs(exact)  # a different loss
    assert obj.row("adam", 1e-3)["loss"] == pytest.approx(exact, rel=1e-14)
    phases = (PhaseConfig("adam", 20, 1e-2, smooth=5.0), PhaseConfig("lbfgs", 20, 1.0, smooth=50.0))
    cfg = TrainConfig(lam=0.01, phases=(*phases, PhaseConfig("lbfgs", 10, 1.0)),
                      dtype="float64", log_every=10)  # fmt: skip
    res = train(tiny_net, tiny_data, cfg, progress=False)
    final = regularized_loss(tiny_net, tiny_data.x_train, tiny_data.y_train, 0.01)["loss"]
    assert res.metrics[-1]["loss"] == pytest.approx(final, rel=1e-12)
    assert final < exact


def test_a_continuation_ends_near_the_exact_optimum(tiny_data):
    """A rising path of sharpness then an exact L-BFGS phase: the last row is the exact
    network's loss (measured independently) and the smoothing lowered it."""
    phases = tuple(PhaseConfig("lbfgs", 40, 1.0, smooth=b) for b in (10.0, 100.0, 1e3))
    cfg = TrainConfig(lam=0.01, phases=(PhaseConfig("adam", 50, 1e-2), *phases,
                                        PhaseConfig("lbfgs", 20, 1.0)),  # fmt: skip
                      dtype="float64", log_every=10)  # fmt: skip
    net = _fcnn(tiny_data)
    res = train(net, tiny_data, cfg, progress=False)
    assert [r["phase"] for r in res.metrics][-1] == "lbfgs"
    final = regularized_loss(net, tiny_data.x_train, tiny_data.y_train, 0.01)["loss"]
    assert res.metrics[-1]["loss"] == pytest.approx(final, rel=1e-12)
    assert final < res.metrics[4]["loss"]  # below the end of Adam


def test_bad_smoothing_settings_are_refused_in_one_line(tiny_data):
    with pytest.raises(ConfigError, match="smooth"):
        PhaseConfig("lbfgs", 10, smooth=-1.0)
    with pytest.raises(ConfigError, match="last phase is smoothed"):
        TrainConfig(lam=0.01, phases=(PhaseConfig("lbfgs", 10, smooth=10.0),))
    with pytest.raises(ConfigError, match="compile"):
        TrainConfig(
            lam=0.01,
            phases=(PhaseConfig("lbfgs", 5, smooth=10.0), PhaseConfig("lbfgs", 5)),
            compile=True,
        )
    linear = _fcnn(tiny_data, activation="identity")  # no ReLU call: nothing to smooth
    cfg = TrainConfig(
        lam=0.01,
        phases=(PhaseConfig("adam", 5, smooth=10.0), PhaseConfig("adam", 5)),
        dtype="float64",
    )
    with pytest.raises(ConfigError, match="no relu/leaky_relu call"):
        train(linear, tiny_data, cfg, progress=False)
