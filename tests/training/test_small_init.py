"""Small-initialization GD with a norm-dependent learning rate (paper 003, Sec 2.1)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from bottlenecklab.config import ConfigError
from bottlenecklab.models import FCNNConfig
from bottlenecklab.tasks import Dataset
from bottlenecklab.training import SmallInitConfig, scale_to_norm, train_small_init


def _data(N=24, d_in=3, d_out=2, seed=0):
    g = np.random.default_rng(seed)
    x, y = g.standard_normal((N, d_in)), g.standard_normal((N, d_out))
    return Dataset(x, y, x[:2], y[:2])


def _net(depth=3, seed=1):
    cfg = FCNNConfig(depth=depth, width=5, bias_scale=0.0, init="normal", init_scale=1.0)
    return cfg.build(3, 2, seed=seed, dtype=torch.float64)


def test_scale_to_norm():
    net = _net()
    scale_to_norm(net, 0.3)
    assert math.isclose(math.sqrt(sum(float(p.pow(2).sum()) for p in net.parameters())), 0.3)


def test_full_batch_matches_manual_gd():
    data = _data()
    a, b = _net(), _net()
    train_small_init(a, data, SmallInitConfig(steps=5, lr=0.05, log_every=1))
    X, Y = torch.as_tensor(data.x_train), torch.as_tensor(data.y_train)
    params = [p for p in b.parameters()]
    for _ in range(5):
        loss = (b(X) - Y).pow(2).sum() / X.shape[0]
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for p, g in zip(params, grads):
                p -= 0.05 * g
    for p, q in zip(a.parameters(), b.parameters()):
        assert torch.allclose(p, q, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("depth", [3, 4])
def test_tau_time_direction_does_not_depend_on_scale(depth):
    """With eta = c ||theta||^{2-L} the direction's path is scale-free while C ~ C(0)."""
    data = _data()
    dirs = []
    for r0 in (1e-3, 4e-3):
        net = _net(depth)
        cfg = SmallInitConfig(
            steps=200,
            lr=0.05,
            lr_power=2 - depth,
            init_norm=r0,
            log_every=20,
            keep_directions=True,
        )
        dirs.append(train_small_init(net, data, cfg).directions)
    gap = max(float((u - v).norm()) for u, v in zip(*dirs))
    assert gap <= 1e-3
    # and it is not trivially so: the direction moved
    assert float((dirs[0][-1] - dirs[0][0]).norm()) > 1e-2


def test_constant_lr_direction_depends_on_scale():
    data = _data()
    dirs = []
    for r0 in (1e-2, 4e-2):
        cfg = SmallInitConfig(steps=200, lr=0.05, init_norm=r0, log_every=20, keep_directions=True)
        dirs.append(train_small_init(_net(3), data, cfg).directions)
    assert max(float((u - v).norm()) for u, v in zip(*dirs)) > 1e-2


def test_minibatch_seeded_and_svd_logged():
    data = _data(N=20)
    cfg = SmallInitConfig(steps=30, lr=0.05, batch_size=4, log_every=10, svd_every=10, seed=3)
    r1 = train_small_init(_net(), data, cfg)
    r2 = train_small_init(_net(), data, cfg)
    assert [m["loss"] for m in r1.metrics] == [m["loss"] for m in r2.metrics]
    assert {s["step"] for s in r1.spectra} == {0, 10, 20, 30}
    assert {s["layer"] for s in r1.spectra} == {1, 2, 3}


def test_stop_fraction():
    data = _data()
    cfg = SmallInitConfig(steps=5000, lr=0.1, init_norm=1.0, log_every=5, stop_fraction=0.9)
    r = train_small_init(_net(), data, cfg)
    assert r.metrics[-1]["loss"] <= 0.9 * r.metrics[0]["loss"] and r.steps < 5000


@pytest.mark.parametrize("min_lr, max_lr", [(0.0, math.inf), (0.02, math.inf), (0.0, 0.01)])
def test_lr_clipped_to_floor_and_cap(min_lr, max_lr):
    """`eta = lr ||theta||^p` clipped to `[min_lr, max_lr]`, as logged and as applied."""
    data = _data()
    cfg = SmallInitConfig(
        steps=3, lr=0.05, lr_power=-2, init_norm=3.0, log_every=1, min_lr=min_lr, max_lr=max_lr
    )
    r = train_small_init(_net(), data, cfg)
    for m in r.metrics:
        assert m["lr"] == min(max(0.05 * m["norm"] ** -2, min_lr), max_lr)
    if min_lr:
        assert all(m["lr"] == min_lr for m in r.metrics)  # 0.05 / 9 < 0.02: the floor


def test_min_lr_above_max_lr_refused():
    with pytest.raises(ConfigError, match="min_lr"):
        SmallInitConfig(min_lr=1.0, max_lr=0.5)


@pytest.mark.parametrize("power", [0.0, -1.0])
def test_the_trainer_runs_the_same_gd(power, tmp_path):
    """`train` with an `sgd` phase of `lr_power` and `stop_fraction` (what the experiments
    train through the grid) is `train_small_init`'s GD: same iterates, same stop."""
    from bottlenecklab.training import PhaseConfig, TrainConfig, train

    data = _data()
    a, b = _net(), _net()
    scale_to_norm(a, 0.3)
    scale_to_norm(b, 0.3)
    run = SmallInitConfig(steps=400, lr=0.2, lr_power=power, log_every=5, stop_fraction=0.9)
    res = train_small_init(a, data, run)
    cfg = TrainConfig(
        lam=0.0,
        phases=(PhaseConfig("sgd", 400, 0.2, lr_power=power),),
        dtype="float64",
        log_every=5,
        checkpoint_every=5,
        stop_fraction=0.9,
    )
    tr = train(b, data, cfg, progress=False, checkpoint=tmp_path / "c.pt")
    assert res.steps < 400 and tr.steps == res.steps  # stopped at the same logged step
    for p, q in zip(a.parameters(), b.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-12, atol=1e-14)
    # resuming a stopped run trains no further
    again = train(b, data, cfg, progress=False, checkpoint=tmp_path / "c.pt", resume=True)
    assert again.steps == tr.steps


def test_lr_power_is_for_sgd_only():
    from bottlenecklab.training import PhaseConfig

    with pytest.raises(ConfigError, match="lr_power"):
        PhaseConfig("adam", 10, 1e-3, lr_power=-1.0)
