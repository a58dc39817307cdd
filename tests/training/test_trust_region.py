"""The torch trust-region phase against scipy's (`newton`): the same optimum of a ridge
problem and loss of a smooth deep linear net, a leaky ResNet trained at least as far,
monotone, resumable bitwise."""

from __future__ import annotations

import pytest
import torch

from bottlenecklab.models import FCNNConfig
from bottlenecklab.training import (
    PhaseConfig,
    TrainConfig,
    TrustRegion,
    newton_steps,
    train,
    trust_region_step,
)

F64 = torch.float64
EPS = torch.finfo(F64).eps


def _ridge():
    g = torch.Generator().manual_seed(0)
    A = torch.randn(40, 6, generator=g, dtype=F64)
    b = torch.randn(40, generator=g, dtype=F64)
    exact = torch.linalg.solve(A.T @ A + 0.1 * torch.eye(6, dtype=F64), A.T @ b)
    return A, b, exact


@pytest.mark.parametrize("radius", [10.0, 0.1])
def test_ridge_optimum_as_scipy_reaches_it(radius):
    """From inside (10) or far outside (0.1) the trust region, the closed-form ridge
    solution to the attainable accuracy, as scipy's trust-krylov: steps are accepted on
    loss values, which resolve `|dx|` only down to ~sqrt(eps) (times the conditioning)."""
    A, b, exact = _ridge()
    x = torch.nn.Parameter(torch.zeros(6, dtype=F64))
    y = torch.nn.Parameter(torch.zeros(6, dtype=F64))
    state = TrustRegion(radius)

    def loss() -> torch.Tensor:
        return (A @ x - b).pow(2).sum() + 0.1 * x.pow(2).sum()

    for _ in range(40):
        _, stopped = trust_region_step(loss, [x], state)
        if stopped:
            break
    assert stopped
    newton_steps(lambda: (A @ y - b).pow(2).sum() + 0.1 * y.pow(2).sum(), [y], 40, radius=radius)
    H = A.T @ A + 0.1 * torch.eye(6, dtype=F64)
    bound = float(torch.linalg.cond(H)) * EPS**0.5 * float(exact.norm())
    assert float((x.detach() - exact).norm()) <= bound
    assert float((x.detach() - y.detach()).norm()) <= 2 * bound


def test_smooth_deep_linear_net_same_loss_as_scipy_to_round_off(tiny_data):
    """A deep linear net after Adam (smooth: both methods converge quadratically): the
    same final loss to round-off (the minima form a manifold, so the points may differ)."""
    final = {}
    for kind in ("newton", "trust_region"):
        net = FCNNConfig(depth=3, width=6, activation="identity").build(
            tiny_data.d_in, tiny_data.d_out, seed=0, dtype=F64
        )
        adam = TrainConfig(lam=0.05, phases=(PhaseConfig("adam", 300, 1e-2),), dtype="float64")
        train(net, tiny_data, adam, progress=False)
        cfg = TrainConfig(lam=0.05, phases=(PhaseConfig(kind, 40, 1.0),), dtype="float64")
        res = train(net, tiny_data, cfg, progress=False)
        assert res.metrics[-1]["grad_norm"] <= 1e-7
        final[kind] = res.metrics[-1]["loss"]
    assert final["trust_region"] == pytest.approx(final["newton"], rel=1e-12)


def test_leaky_resnet_trains_at_least_as_far_as_scipy_newton(resnet_setup):
    """After the same Adam phase, 60 iterations of each: monotone logged losses, and the
    torch phase ends no higher than scipy's (ReLU kinks: the paths differ; measured 1.1086
    against 1.1185)."""
    data, net = resnet_setup
    final = {}
    for kind in ("newton", "trust_region"):
        cfg = TrainConfig(
            lam=0.05,
            phases=(PhaseConfig("adam", 300, 1e-2), PhaseConfig(kind, 60, 1.0)),
            dtype="float64",
            log_every=5,
        )
        res = train(net(), data, cfg, progress=False)
        losses = [r["loss"] for r in res.metrics if r["phase"] == kind]
        assert all(b <= a * (1 + 10 * EPS) for a, b in zip(losses, losses[1:]))
        assert res.steps == 360
        final[kind] = losses[-1]
    assert final["trust_region"] <= final["newton"] * (1 + 1e-3)


def test_trust_region_resumes_bitwise_after_a_crash(crash_and_resume):
    cfg = TrainConfig(
        lam=0.05,
        phases=(PhaseConfig("adam", 50, 1e-2), PhaseConfig("trust_region", 30, 1.0)),
        dtype="float64",
        log_every=5,
        checkpoint_every=10,
    )
    assert crash_and_resume(cfg, at=70)["radius"] > 0


def _failing_after(n: int, monkeypatch) -> None:
    """Make the torch trust region report failure from its `n`-th iteration on."""
    import bottlenecklab.training._phases as phases_module

    real, calls = phases_module.trust_region_step, []

    def step(loss_fn, params, state):
        calls.append(1)
        loss, stopped = real(loss_fn, params, state)
        return loss, stopped or len(calls) >= n

    monkeypatch.setattr(phases_module, "trust_region_step", step)


def test_a_phase_that_stops_early_logs_its_last_row(monkeypatch, resnet_setup):
    """A last phase whose method stops at iteration 10 of 400 logs the row of the step
    where it stopped (`stopped_early`), books the rest, and still logs the final row."""
    data, net = resnet_setup
    cfg = TrainConfig(
        lam=0.05,
        phases=(PhaseConfig("adam", 50, 1e-2), PhaseConfig("trust_region", 400, 1.0)),
        dtype="float64",
        log_every=200,
        checkpoint_every=1000,
    )
    _failing_after(10, monkeypatch)
    res = train(net(), data, cfg, progress=False)
    steps = [r["step"] for r in res.metrics]
    assert steps == [59, 450] and res.steps == 450  # 9 steps done, the 10th failed
    assert res.metrics[0]["stopped_early"] and res.metrics[0]["loss"] == res.metrics[1]["loss"]


def _tridiagonal(seed: int, k: int, shift: float) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(k, generator=g, dtype=F64) + shift
    b = torch.randn(k - 1, generator=g, dtype=F64).abs()
    return torch.diag(a) + torch.diag(b, 1) + torch.diag(b, -1)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("shift", [3.0, 0.0, -2.0])  # definite, indefinite
@pytest.mark.parametrize("radius", [1e-3, 0.3, 30.0])
def test_small_problem_meets_the_trust_region_optimality_conditions(seed, shift, radius):
    """The subproblem `min g_norm h_1 + h.T h/2, ||h|| <= r` has a global minimizer iff
    `(T + mu I) h = -c`, `T + mu I` PSD, `mu >= 0`, `mu (r - ||h||) = 0` (Moré & Sorensen
    1983); the solver's `h` meets them to round-off."""
    from bottlenecklab.training._trust_region import _small_problem

    k = 2 + seed * 3
    T = _tridiagonal(seed, k, shift)
    g_norm = 0.7
    h = _small_problem(T, g_norm, radius)
    c = torch.zeros(k, dtype=F64)
    c[0] = g_norm
    scale = float(torch.linalg.matrix_norm(T, 2)) * radius + g_norm
    tol = 1e3 * k * EPS
    assert float(h.norm()) <= radius * (1 + tol)
    inside = float(h.norm()) < radius * (1 - 1e-9)
    mu = 0.0 if inside else -float(h @ (T @ h + c)) / float(h @ h)
    assert mu >= -tol * scale / radius
    assert float((T @ h + mu * h + c).norm()) <= tol * scale
    lowest = float(torch.linalg.eigvalsh(T)[0])
    assert lowest + mu >= -tol * scale / radius
