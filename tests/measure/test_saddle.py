"""Saddle diagnostics on FCNNs (paper 003): layer profile, weak balancedness under GD,
escape step and loss-drop detection."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from bottlenecklab.measure import escape_step, fcnn_weak_balancedness, fcnn_weights, saddle_layers
from bottlenecklab.measure._saddles import loss_drops
from bottlenecklab.models import FCNNConfig
from bottlenecklab.theory import tail_energy

EPS = torch.finfo(torch.float64).eps


def _net(depth=4, width=6, std=0.5, seed=0):
    cfg = FCNNConfig(depth=depth, width=width, bias_scale=0.0, init="normal", init_scale=std)
    return cfg.build(3, 2, seed=seed, dtype=torch.float32)


def test_saddle_layers_rows():
    net = _net()
    X = np.random.default_rng(0).standard_normal((10, 3))
    rows = saddle_layers(net, X)
    assert [r["layer"] for r in rows] == [1.0, 2.0, 3.0, 4.0]
    W = fcnn_weights(net)
    assert W[0].dtype == torch.float64 and net.weights[0].dtype == torch.float32
    assert rows[1]["tail_W"] == pytest.approx(float(tail_energy(W[1])), abs=1e-12)
    assert math.isnan(rows[-1]["tail_Z"]) and 0 <= rows[0]["nonlinearity"] <= 1


@pytest.mark.parametrize("eta", [1e-2, 1e-1])
def test_weak_balancedness_drift_on_gd_step(eta):
    net = _net(std=0.3, seed=1)
    net.double()
    g = np.random.default_rng(1)
    X = torch.as_tensor(g.standard_normal((16, 3)))
    Y = torch.as_tensor(g.standard_normal((16, 2)))
    before = fcnn_weak_balancedness(net)
    loss = (net(X) - Y).pow(2).sum() / 16
    grads = torch.autograd.grad(loss, list(net.weights))
    with torch.no_grad():
        for W, gr in zip(net.weights, grads):
            W -= eta * gr
    after = fcnn_weak_balancedness(net)
    scale = sum(float(W.detach().pow(2).sum()) for W in net.weights)
    for l in range(len(before)):
        pred = eta**2 * (grads[l].pow(2).sum(-1) - grads[l + 1].pow(2).sum(-2)).numpy()
        assert np.abs(after[l] - before[l] - pred).max() <= 1e3 * EPS * scale


def test_escape_step():
    steps = [0, 10, 20, 30]
    assert escape_step(steps, [1.0, 0.95, 0.89, 0.5]) == 20
    assert math.isnan(escape_step(steps, [1.0, 0.99, 0.98, 0.97]))


def _staircase(levels, centers, width=30.0, noise=0.0, n=2000):
    t = np.linspace(0, 2000, n)
    loss = np.full(n, levels[0])
    for (a, b), c in zip(zip(levels[:-1], levels[1:]), centers):
        loss -= (a - b) / (1 + np.exp(-(t - c) / width))
    rng = np.random.default_rng(0)
    return t, loss * (1 + noise * rng.standard_normal(n))


def test_loss_drops_two_steps():
    t, loss = _staircase([2.3, 1.2, 0.3], [500, 1400], noise=0.002)
    out = loss_drops(t, loss)
    assert len(out["drops"]) == 2
    assert 500 < out["flattest"][0] < 1400
    assert out["drops"][0][1] == pytest.approx(500, abs=40)
    assert all(s > 10 for s in out["sharpness"])


def test_loss_drops_single_step_is_one_drop():
    t, loss = _staircase([2.3, 0.3], [800])
    out = loss_drops(t, loss)
    assert len(out["drops"]) == 1 and out["flattest"] == []


def test_loss_drops_min_fall_ignores_the_noise_of_a_flat_curve():
    """Scale-free rates count the wiggles of a flat noisy curve as drops; a required fall
    of the smoothed loss removes them and keeps real drops, whose falls are returned."""
    t = np.linspace(0, 2000, 501)
    flat = 2.3 + 1e-4 * np.random.default_rng(0).standard_normal(t.size)
    assert len(loss_drops(t, flat)["drops"]) >= 10
    assert loss_drops(t, flat, min_fall=0.23) == {
        "drops": [],
        "flattest": [],
        "sharpness": [],
        "falls": [],
    }
    t, loss = _staircase([2.3, 1.2, 0.3], [500, 1400], noise=0.002)
    out = loss_drops(t, loss, min_fall=0.23)
    assert len(out["drops"]) == 2
    assert out["falls"] == [pytest.approx(1.1, abs=0.05), pytest.approx(0.9, abs=0.05)]
    assert len(loss_drops(t, loss, min_fall=1.0)["drops"]) == 1  # the 0.9 drop is too small


def test_direction_gaps_are_the_largest_pairwise_distance_per_common_step():
    from bottlenecklab.measure import direction_gaps

    e0, e1 = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    paths = [{1: e0, 2: e0, 3: e0}, {1: e0, 2: e1, 3: e1}, {1: e0, 2: -e0}]
    gaps = direction_gaps(paths, until=2)
    assert set(gaps) == {1, 2}  # step 3 is not in every path; nothing past `until`
    assert gaps[1] == 0.0 and gaps[2] == pytest.approx(2.0)  # e0 vs -e0
