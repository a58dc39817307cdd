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


def test_minibatch_seeded():
    data = _data(N=20)
    cfg = SmallInitConfig(steps=30, lr=0.05, batch_size=4, log_every=10, seed=3)
    r1 = train_small_init(_net(), data, cfg)
    r2 = train_small_init(_net(), data, cfg)
    assert [m["loss"] for m in r1.metrics] == [m["loss"] for m in r2.metrics]
    assert [m["step"] for m in r1.metrics] == [0, 10, 20, 30]
    other = train_small_init(_net(), data, SmallInitConfig(**{**cfg.__dict__, "seed": 4}))
    assert [m["loss"] for m in other.metrics][1:] != [m["loss"] for m in r1.metrics][1:]


def test_stop_fraction():
    data = _data()
    cfg = SmallInitConfig(steps=5000, lr=0.1, init_norm=1.0, log_every=5, stop_fraction=0.9)
    r = train_small_init(_net(), data, cfg)
    assert r.metrics[-1]["loss"] <= 0.9 * r.metrics[0]["loss"] and r.steps < 5000


@pytest.mark.parametrize("min_lr", [0.0, 0.02])
def test_lr_floor(min_lr):
    """`eta = max(lr ||theta||^p, min_lr)`, as logged and as applied."""
    data = _data()
    cfg = SmallInitConfig(steps=3, lr=0.05, lr_power=-2, init_norm=3.0, log_every=1, min_lr=min_lr)
    r = train_small_init(_net(), data, cfg)
    for m in r.metrics:
        assert m["lr"] == max(0.05 * m["norm"] ** -2, min_lr)
    if min_lr:
        assert all(m["lr"] == min_lr for m in r.metrics)  # 0.05 / 9 < 0.02: the floor
    # as applied: the first step of a manual GD at that step size
    net = _net()
    scale_to_norm(net, 3.0)
    X, Y = torch.as_tensor(data.x_train), torch.as_tensor(data.y_train)
    params = list(net.parameters())
    grads = torch.autograd.grad((net(X) - Y).pow(2).sum() / X.shape[0], params)
    eta = r.metrics[0]["lr"]
    with torch.no_grad():
        for p, g in zip(params, grads):
            p -= eta * g
    n1 = math.sqrt(sum(float(p.pow(2).sum()) for p in params))
    assert math.isclose(n1, r.metrics[1]["norm"], rel_tol=1e-12)


def test_negative_min_lr_refused():
    with pytest.raises(ConfigError, match="min_lr"):
        SmallInitConfig(min_lr=-1.0)


def _old_loop(model, data, steps, lr, power, batch, seed):
    """paper 003's mini-batch GD as `train_small_init` wrote it before it went through
    `train`: a seeded reshuffle per epoch, `p -= lr ||theta||^power * grad`."""
    X, Y = torch.as_tensor(data.x_train), torch.as_tensor(data.y_train)
    params = list(model.parameters())
    gen = torch.Generator().manual_seed(seed)
    order, pos = torch.randperm(X.shape[0], generator=gen), 0
    for _ in range(steps):
        if pos + batch > X.shape[0]:
            order, pos = torch.randperm(X.shape[0], generator=gen), 0
        idx = order[pos : pos + batch]
        pos += batch
        eta = lr * math.sqrt(sum(float(p.pow(2).sum()) for p in params)) ** power
        grads = torch.autograd.grad((model(X[idx]) - Y[idx]).pow(2).sum() / batch, params)
        with torch.no_grad():
            for p, g in zip(params, grads):
                p.sub_(eta * g)


@pytest.mark.parametrize("power, batch", [(0.0, 0), (-1.0, 0), (-1.0, 5)])
def test_the_sgd_phase_runs_the_old_loop(power, batch):
    """An `sgd` phase with `lr_power` and `batch_size` (what the experiments train
    through the grid) runs the old small-init loop: same iterates to round-off, the same
    batches (23 samples in batches of 5: the tail of each epoch is skipped)."""
    from bottlenecklab.training import PhaseConfig, TrainConfig, train

    data = _data(N=23)
    a, b = _net(), _net()
    scale_to_norm(a, 0.3)
    scale_to_norm(b, 0.3)
    _old_loop(a, data, 60, 0.2, power, batch or 23, seed=7)
    phase = PhaseConfig("sgd", 60, 0.2, lr_power=power, batch_size=batch, seed=7)
    cfg = TrainConfig(lam=0.0, phases=(phase,), dtype="float64", log_every=20)
    train(b, data, cfg, progress=False)
    for p, q in zip(a.parameters(), b.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-12, atol=1e-14)


def test_stopped_run_resumes_to_the_same_stop(tmp_path):
    """With `stop_fraction` a run ends at its first logged loss below the fraction;
    resuming a stopped run trains no further."""
    from bottlenecklab.training import PhaseConfig, TrainConfig, train

    data = _data()
    net = _net()
    scale_to_norm(net, 0.3)
    cfg = TrainConfig(
        lam=0.0,
        phases=(PhaseConfig("sgd", 400, 0.2, lr_power=-1.0),),
        dtype="float64",
        log_every=5,
        checkpoint_every=5,
        stop_fraction=0.9,
    )
    X, Y = torch.as_tensor(data.x_train), torch.as_tensor(data.y_train)
    with torch.no_grad():
        c0 = float((net(X) - Y).pow(2).sum()) / X.shape[0]
    tr = train(net, data, cfg, progress=False, checkpoint=tmp_path / "c.pt")
    assert tr.steps < 400 and tr.metrics[-1]["loss"] <= 0.9 * c0 < tr.metrics[-2]["loss"]
    again = train(net, data, cfg, progress=False, checkpoint=tmp_path / "c.pt", resume=True)
    assert again.steps == tr.steps


def test_lr_power_is_for_sgd_only():
    from bottlenecklab.training import PhaseConfig

    with pytest.raises(ConfigError, match="lr_power"):
        PhaseConfig("adam", 10, 1e-3, lr_power=-1.0)
    with pytest.raises(ConfigError, match="batch_size"):
        PhaseConfig("adam", 10, 1e-3, batch_size=4)
    with pytest.raises(ConfigError, match="backtrack"):
        PhaseConfig("sgd", 10, 1e-3, batch_size=4, backtrack=True)
