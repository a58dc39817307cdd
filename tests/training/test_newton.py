"""The trust-region Newton phase: exact on a quadratic, monotone, converging where the
first-order phases leave a gradient, booked like any phase, resumable."""

from __future__ import annotations

import torch

from bottlenecklab.models import FCNNConfig, LeakyResNetConfig
from bottlenecklab.tasks import data_cost
from bottlenecklab.training import PhaseConfig, TrainConfig, load_checkpoint, newton_steps, train

F64 = torch.float64
EPS = torch.finfo(F64).eps


def _grad_norm(model, data, lam: float) -> float:
    X = torch.as_tensor(data.x_train, dtype=F64)
    Y = torch.as_tensor(data.y_train, dtype=F64)
    params = [p for p in model.parameters() if p.requires_grad]
    loss = data_cost(model(X), Y) + model.regularization(lam)
    grads = torch.autograd.grad(loss, params)
    return float(torch.sqrt(sum(g.pow(2).sum() for g in grads)))


def test_newton_solves_a_ridge_problem_to_round_off():
    """On a strictly convex quadratic the Newton step is exact: a few iterations reach the
    closed-form ridge solution. Steps are accepted on loss values, which near the optimum
    differ by ~|dx|^2: the attainable accuracy is ~sqrt(eps) relative (times the
    conditioning), not eps."""
    g = torch.Generator().manual_seed(0)
    A = torch.randn(40, 6, generator=g, dtype=F64)
    b = torch.randn(40, generator=g, dtype=F64)
    lam = 0.1
    x = torch.nn.Parameter(torch.zeros(6, dtype=F64))

    def loss():
        return (A @ x - b).pow(2).sum() + lam * x.pow(2).sum()

    out = newton_steps(loss, [x], 20, radius=10.0)
    exact = torch.linalg.solve(A.T @ A + lam * torch.eye(6, dtype=F64), A.T @ b)
    cond = float(torch.linalg.cond(A.T @ A + lam * torch.eye(6, dtype=F64)))
    assert out.steps >= 1
    assert float((x.detach() - exact).norm()) <= cond * EPS**0.5 * float(exact.norm())


def test_newton_phase_converges_where_adam_leaves_a_gradient(tiny_data):
    """A deep linear net (smooth, non-convex): after Adam, the Newton phase's logged losses
    never rise (accepted steps only) and the gradient norm drops at least a thousandfold
    (quadratic convergence; a ReLU net's kinks would cap it, see the flagship docstring)."""
    lam = 0.05
    net = FCNNConfig(depth=3, width=6, activation="identity").build(
        tiny_data.d_in, tiny_data.d_out, seed=0, dtype=F64
    )
    adam = TrainConfig(lam=lam, phases=(PhaseConfig("adam", 300, 1e-2),), dtype="float64")
    train(net, tiny_data, adam, progress=False)
    before = _grad_norm(net, tiny_data, lam)
    cfg = TrainConfig(
        lam=lam, phases=(PhaseConfig("newton", 60, 1.0),), dtype="float64", log_every=1
    )
    res = train(net, tiny_data, cfg, progress=False)
    losses = [r["loss"] for r in res.metrics]
    assert all(b <= a * (1 + 10 * EPS) for a, b in zip(losses, losses[1:]))
    assert res.steps == 60  # an early stop is booked as the phase's end
    assert _grad_norm(net, tiny_data, lam) <= before / 1000


def test_newton_phase_never_raises_a_leaky_resnet_loss(tiny_data):
    lam = 0.05
    net = LeakyResNetConfig(width=5, depth=4, leak=1.0).build(
        tiny_data.d_in, tiny_data.d_out, seed=1, dtype=F64
    )
    cfg = TrainConfig(
        lam=lam,
        phases=(PhaseConfig("adam", 100, 1e-2), PhaseConfig("newton", 30, 1.0)),
        dtype="float64",
        log_every=1,
    )
    res = train(net, tiny_data, cfg, progress=False)
    losses = [r["loss"] for r in res.metrics if r["phase"] == "newton"]
    assert len(losses) >= 1
    assert all(b <= a * (1 + 10 * EPS) for a, b in zip(losses, losses[1:]))


def test_forward_twice_differentiable_matches_the_fused_forward(tiny_net, tiny_data):
    X = torch.as_tensor(tiny_data.x_train, dtype=F64)
    with torch.no_grad():
        torch.testing.assert_close(tiny_net.forward_twice_differentiable(X), tiny_net(X))


def test_newton_trains_a_model_without_a_separate_smooth_forward(tiny_data):
    """The FCNN's own forward is plain autograd: the phase uses it directly."""
    net = FCNNConfig(depth=3, width=6, slope=0.2).build(
        tiny_data.d_in, tiny_data.d_out, seed=0, dtype=F64
    )
    cfg = TrainConfig(
        lam=0.01,
        phases=(PhaseConfig("adam", 100, 1e-2), PhaseConfig("newton", 20, 1.0)),
        dtype="float64",
        log_every=10,
    )
    res = train(net, tiny_data, cfg, progress=False)
    assert [r["phase"] for r in res.metrics][-1] == "newton"
    assert res.metrics[-1]["loss"] <= res.metrics[-3]["loss"]


def test_newton_phase_resumes_from_its_checkpoint(tiny_data, crash_at):
    """A crash in the middle of the Newton phase: the resumed run finishes the phase with
    the same step count and a loss no higher than at the crash (the trust radius resumes
    from the last accepted step, so the iterates may differ in their last digits)."""
    cfg = TrainConfig(
        lam=0.05,
        phases=(PhaseConfig("adam", 100, 1e-2), PhaseConfig("newton", 40, 1.0)),
        dtype="float64",
        log_every=5,
        checkpoint_every=10,
    )

    def net():
        return LeakyResNetConfig(width=5, depth=4, leak=1.0).build(
            tiny_data.d_in, tiny_data.d_out, seed=1, dtype=F64
        )

    ckpt = crash_at(net(), tiny_data, cfg, 120)
    state = load_checkpoint(ckpt)
    assert state["steps"] == 120 and state["optimizer"]["radius"] > 0
    crash_loss = state["metrics"][-1]["loss"]
    res = train(net(), tiny_data, cfg, progress=False, checkpoint=ckpt, resume=True)
    assert res.steps == 140
    assert res.metrics[-1]["loss"] <= crash_loss * (1 + 10 * EPS)
