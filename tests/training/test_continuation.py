"""Continuation in the weight decay: each phase trains at its own `lam`, a geometric path
of phases reaches the same optimum as direct training, resume mid-stage is bitwise, and
the config says in one line when the path does not end at `train.lam`."""

from __future__ import annotations

import math

import pytest
import torch

from bottlenecklab.config import ConfigError, apply_overrides
from bottlenecklab.measure import certify
from bottlenecklab.models import FCNNConfig, LeakyResNetConfig
from bottlenecklab.tasks import Dataset, data_cost
from bottlenecklab.training import (
    PhaseConfig,
    TrainConfig,
    continuation,
    load_checkpoint,
    train,
    train_ensemble,
)

EPS = torch.finfo(torch.float64).eps


# --- the path -----------------------------------------------------------------------------


@pytest.mark.parametrize("stages", [2, 3, 5])
def test_continuation_is_a_geometric_path_ending_exactly_at_lam_end(stages):
    phase = PhaseConfig("lbfgs", 7, 0.5, history=9)
    path = continuation(0.05, 0.002, stages, phase)
    lams = [p.lam for p in path]
    assert len(path) == stages and lams[0] == 0.05 and lams[-1] == 0.002  # exact endpoints
    ratios = [b / a for a, b in zip(lams[:-1], lams[1:])]
    assert ratios == pytest.approx([(0.002 / 0.05) ** (1 / (stages - 1))] * (stages - 1))
    assert all(p == PhaseConfig("lbfgs", 7, 0.5, history=9, lam=p.lam) for p in path)


@pytest.mark.parametrize(
    "args, match",
    [
        ((0.05, 0.002, 1), "stages"),
        ((0.0, 0.002, 3), "> 0"),
        ((0.05, -1.0, 3), "> 0"),
    ],
)
def test_continuation_rejects_a_path_that_is_not_geometric(args, match):
    with pytest.raises(ConfigError, match=match) as info:
        continuation(*args, PhaseConfig("lbfgs", 5))
    assert "\n" not in str(info.value)


# --- the config ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "phases",
    [
        (PhaseConfig("adam", 5, lam=0.1), PhaseConfig("lbfgs", 5, lam=0.05)),
        continuation(0.1, 0.05, 3, PhaseConfig("lbfgs", 5)),
        (PhaseConfig("lbfgs", 5), PhaseConfig("newton", 0, lam=0.1)),
    ],
    ids=["explicit", "path-to-another-lam", "zero-step-last-phase"],
)
def test_the_last_phase_must_train_at_train_lam(phases):
    with pytest.raises(ConfigError, match="last phase trains at lam") as info:
        TrainConfig(lam=0.002, phases=phases)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    "phases",
    [
        (PhaseConfig("adam", 5, lam=0.1), PhaseConfig("lbfgs", 5)),
        (PhaseConfig("adam", 5, lam=0.1), PhaseConfig("lbfgs", 5, lam=0.002)),
        continuation(0.1, 0.002, 3, PhaseConfig("lbfgs", 5)),
        (*continuation(0.1, 0.01, 3, PhaseConfig("lbfgs", 5)), PhaseConfig("newton", 5)),
    ],
    ids=["none", "equal", "path", "path-then-newton"],
)
def test_a_path_ending_at_train_lam_is_accepted(phases):
    assert TrainConfig(lam=0.002, phases=phases).lam_of(phases[-1]) == 0.002


@pytest.mark.parametrize("lam", [-1e-3, math.nan])
def test_phase_lam_must_be_a_weight_decay(lam):
    with pytest.raises(ConfigError, match="phase lam") as info:
        PhaseConfig("adam", 5, lam=lam)
    assert "\n" not in str(info.value)


def test_phase_lam_is_an_override_key():
    cfg = TrainConfig(lam=0.002, phases=(PhaseConfig("adam", 5), PhaseConfig("lbfgs", 5)))
    cfg = apply_overrides(cfg, {"phases.0.lam": "0.05"})
    assert cfg.phases[0].lam == 0.05 and cfg.lam_of(cfg.phases[1]) == 0.002
    with pytest.raises(ConfigError, match="last phase"):
        apply_overrides(cfg, {"phases.1.lam": "0.05"})


# --- training -----------------------------------------------------------------------------


def _net(data: Dataset, seed: int = 1):
    return LeakyResNetConfig(width=5, depth=4, leak=1.0).build(
        data.d_in, data.d_out, seed=seed, dtype=torch.float64
    )


def test_each_phase_minimizes_its_own_lam_and_logs_it(tiny_data):
    """Two SGD steps at `lam` 0.5 then 0.01: each moves the weights along the gradient of
    its own objective; each row names the `lam` of its loss."""
    net, ref = _net(tiny_data), _net(tiny_data)
    X, Y = torch.tensor(tiny_data.x_train), torch.tensor(tiny_data.y_train)
    for lam in (0.5, 0.01):
        ref.zero_grad()
        (data_cost(ref(X), Y) + ref.regularization(lam)).backward()
        with torch.no_grad():
            ref.weights -= 0.1 * ref.weights.grad
    phases = (PhaseConfig("sgd", 1, 0.1, lam=0.5), PhaseConfig("sgd", 1, 0.1))
    cfg = TrainConfig(lam=0.01, phases=phases, dtype="float64", log_every=1)
    rows = train(net, tiny_data, cfg, progress=False).metrics
    torch.testing.assert_close(net.weights, ref.weights, rtol=1e3 * EPS, atol=1e3 * EPS)
    assert [r["lam"] for r in rows] == [0.5, 0.01]
    reg = float(net.regularization(0.01).detach())
    assert rows[-1]["reg"] == pytest.approx(reg, rel=1e3 * EPS)


def _ridge(data: Dataset, lam: float, beta: float) -> tuple[torch.Tensor, torch.Tensor]:
    """The unique minimizer `[W^T; b^T]` `[d_in + 1, d_out]` of `(1/N)||Y - X W^T - beta
    1 b^T||^2 + lam (||W||^2 + ||b||^2)` (a one-layer FCNN), and the objective's Hessian
    `[d_in + 1, d_in + 1]` (the same for every output)."""
    X, Y = torch.tensor(data.x_train), torch.tensor(data.y_train)
    Xa = torch.cat([X, beta * torch.ones(len(X), 1, dtype=X.dtype)], dim=1)  # [N, d_in + 1]
    H = Xa.T @ Xa / len(X) + lam * torch.eye(Xa.shape[1], dtype=X.dtype)
    return torch.linalg.solve(H, Xa.T @ Y / len(X)), 2 * H


def test_continuation_reaches_the_ridge_optimum_of_direct_training(tiny_data):
    """A one-layer FCNN with weight decay is ridge regression: one optimum, known in closed
    form. L-BFGS down the path 1 -> 1e-3 and L-BFGS at 1e-3 directly both reach it (and are
    certified), to the precision float64 function values resolve a minimizer at."""
    lam, beta = 1e-3, 1.0
    exact, H = _ridge(tiny_data, lam, beta)
    model = FCNNConfig(depth=1, bias_scale=beta)
    path = continuation(1.0, lam, 4, PhaseConfig("lbfgs", 30, 1.0))
    direct = (PhaseConfig("lbfgs", 120, 1.0),)
    found = []
    for phases in (path, direct):
        net = model.build(tiny_data.d_in, tiny_data.d_out, seed=0, dtype=torch.float64)
        cfg = TrainConfig(lam=lam, phases=phases, dtype="float64")
        loss = train(net, tiny_data, cfg, progress=False).metrics[-1]["loss"]
        # A line search sees F only to eps |F|, so it stops once (1/2) d^T H d <= eps |F|:
        # the minimizer is resolved to |d| <= sqrt(2 eps |F| / eigmin(H)) (L-BFGS stalls
        # there, about 1e-8 here; measured 3e-9 down the path, 6e-12 direct).
        tol = math.sqrt(2 * EPS * loss / float(torch.linalg.eigvalsh(H)[0]))
        theta = torch.cat([net.weights[0].T, net.biases[0][None]]).detach()  # [d_in + 1, d_out]
        torch.testing.assert_close(theta, exact, rtol=0, atol=tol)
        cert = certify(net, tiny_data, lam)
        assert cert.stationarity <= cert.threshold  # certified converged
        found.append((theta, loss, tol))
    (a, loss_a, tol_a), (b, loss_b, tol_b) = found
    torch.testing.assert_close(a, b, rtol=0, atol=tol_a + tol_b)
    assert loss_a == pytest.approx(loss_b, rel=4 * EPS)  # both within eps |F| of F*


# (phases, the step at which the run is killed right after its checkpoint, a multiple of
# `checkpoint_every` = 4): the kill falls in the middle of a stage, not at its boundary
CONTINUATION = (
    PhaseConfig("adam", 6, 1e-2, lam=0.1),
    *continuation(0.1, 0.01, 3, PhaseConfig("lbfgs", 8, 1.0)),
    PhaseConfig("newton", 3, 1.0),
)
KILLS = {
    "mid-lbfgs-stage": (CONTINUATION, 6 + 8 + 6),
    "mid-adam-stage": (
        (*continuation(0.1, 0.01, 3, PhaseConfig("adam", 8, 1e-2)), PhaseConfig("lbfgs", 4)),
        8 + 4,
    ),
}


@pytest.mark.parametrize("case", list(KILLS))
def test_resume_in_the_middle_of_a_stage_is_bitwise_the_uninterrupted_run(
    tiny_data, crash_at, case
):
    """Killed right after the checkpoint in the middle of a continuation stage, then
    resumed: the same parameters and metrics rows, bit for bit (float64, one thread)."""
    phases, kill_at = KILLS[case]
    cfg = TrainConfig(lam=0.01, phases=phases, dtype="float64", log_every=2, checkpoint_every=4)
    straight = _net(tiny_data)
    ref = train(straight, tiny_data, cfg, progress=False)

    ckpt = crash_at(_net(tiny_data), tiny_data, cfg, kill_at)
    state = load_checkpoint(ckpt)
    assert state["steps"] == kill_at and 0 < state["t"] < phases[state["phase"]].steps

    resumed = _net(tiny_data)
    res = train(resumed, tiny_data, cfg, progress=False, checkpoint=ckpt, resume=True)
    for k, v in straight.state_dict().items():
        assert torch.equal(resumed.state_dict()[k], v), k

    def rows(result):
        return [{k: v for k, v in r.items() if k != "wall_s"} for r in result.metrics]

    assert rows(res) == rows(ref)
    assert {r["lam"] for r in ref.metrics} == {cfg.lam_of(p) for p in phases}


def test_an_ensemble_trains_each_phase_at_its_own_lam(tiny_data):
    """Members with different `train.lam` share a first phase at its own `lam`; the
    ensemble gives each member its `train` run (to the round-off of batched GEMMs)."""
    tol = EPS**0.5  # as in test_ensemble: batched and single GEMMs round differently
    phases = (PhaseConfig("adam", 20, 1e-2, lam=0.2), PhaseConfig("sgd", 10, 1e-3))
    cfgs = [
        TrainConfig(lam=lam, phases=phases, dtype="float64", log_every=5) for lam in (0.01, 0.04)
    ]
    ref = [train(_net(tiny_data), tiny_data, c, progress=False) for c in cfgs]
    got = train_ensemble([_net(tiny_data), _net(tiny_data)], [tiny_data] * 2, cfgs)
    for a, b, c in zip(ref, got, cfgs):
        assert [r["lam"] for r in b.metrics] == [r["lam"] for r in a.metrics]
        assert {r["lam"] for r in a.metrics} == {0.2, c.lam}
        for ra, rb in zip(a.metrics, b.metrics):
            assert rb["loss"] == pytest.approx(ra["loss"], rel=tol, abs=tol)
