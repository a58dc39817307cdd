"""Trust-region Newton in the Gauss-Newton metric (`woodbury_newton`): the preconditioned
GLTR against the plain one and against an exact Newton step, the known minimum of a ridge
problem, and the phase on a leaky ResNet (monotone, smoothed, bad input, bitwise resume)."""

from __future__ import annotations

import pytest
import torch

from bottlenecklab.config import ConfigError
from bottlenecklab.training import PhaseConfig, TrainConfig, train
from bottlenecklab.training._trust_region import gltr
from bottlenecklab.training._woodbury import Woodbury
from bottlenecklab.training._woodbury_newton import (
    WoodburyTrustRegion,
    preconditioned_gltr,
    woodbury_trust_region_step,
)

F64 = torch.float64
EPS = torch.finfo(F64).eps


def _indefinite(P: int = 12):
    g = torch.Generator().manual_seed(3)
    Q, _ = torch.linalg.qr(torch.randn(P, P, generator=g, dtype=F64))
    evals = torch.linspace(-0.5, 4.0, P, dtype=F64)
    H = Q @ torch.diag(evals) @ Q.T
    return H, torch.randn(P, generator=g, dtype=F64)


@pytest.mark.parametrize("radius", [0.05, 100.0])
def test_identity_preconditioner_is_the_plain_gltr(radius):
    """With `M = I` the preconditioned solver is `_trust_region.gltr`: the same step and
    predicted decrease on an indefinite Hessian, inside (the hard case aside) and on the
    boundary."""
    H, g = _indefinite()
    p, pred, hit, _ = preconditioned_gltr(lambda v: H @ v, g, radius, 1e-12, lambda v: v)
    q, pred_q, hit_q = gltr(lambda v: H @ v, g, radius, 1e-12)
    assert hit == hit_q
    assert float((p - q).norm()) <= 1e3 * EPS * max(float(q.norm()), 1.0)
    assert pred == pytest.approx(pred_q, rel=1e3 * EPS)


def test_exact_preconditioner_gives_the_newton_step_in_one_iteration():
    """`M = H` (positive definite), radius large: `p = -H^{-1} g` after one Lanczos
    iteration (the preconditioned Hessian is the identity)."""
    H, g = _indefinite()
    H = H + 1.0 * torch.eye(g.numel(), dtype=F64)  # eigenvalues in [0.5, 5]
    p, pred, hit, k = preconditioned_gltr(
        lambda v: H @ v, g, 1e6, 1e-12, lambda v: torch.linalg.solve(H, v)
    )
    newton = -torch.linalg.solve(H, g)
    assert k == 1 and not hit
    bound = g.numel() * EPS * float(torch.linalg.cond(H))
    assert float((p - newton).norm() / newton.norm()) <= bound
    assert pred == pytest.approx(-0.5 * float(g @ newton), rel=bound)


def _ridge():
    """`(1/N) ||A x - b||^2 + (lam/2) ||x||^2` with more parameters than samples."""
    g = torch.Generator().manual_seed(0)
    A = torch.randn(10, 30, generator=g, dtype=F64)
    b = torch.randn(10, generator=g, dtype=F64)
    lam = 1e-3
    H = (2 / 10) * A.T @ A + lam * torch.eye(30, dtype=F64)
    exact = torch.linalg.solve(H, (2 / 10) * A.T @ b)
    return A, b, lam, H, exact


@pytest.mark.parametrize("radius", [100.0, 1e-3])
def test_ridge_reaches_its_known_minimum(radius):
    """From inside (100) or far outside (1e-3) the trust region: the closed-form ridge
    solution, to the accuracy a loss-based acceptance resolves (`sqrt(eps)` times the
    conditioning); `M` is the exact Hessian here (Gauss-Newton of a linear model)."""
    A, b, lam, H, exact = _ridge()
    x = torch.nn.Parameter(torch.zeros(30, dtype=F64))
    state = WoodburyTrustRegion(radius, refresh=5)

    def loss() -> torch.Tensor:
        return (A @ x - b).pow(2).mean() + 0.5 * lam * x.pow(2).sum()

    def preconditioner() -> Woodbury:
        return Woodbury(torch.full((30,), lam, dtype=F64), A, 2 / 10)

    for _ in range(60):
        _, stopped = woodbury_trust_region_step(loss, [x], state, preconditioner)
        if stopped:
            break
    assert stopped
    bound = float(torch.linalg.cond(H)) * EPS**0.5 * float(exact.norm())
    assert float((x.detach() - exact).norm()) <= bound


@pytest.mark.parametrize("smooth", [0.0, 1e3])
def test_leaky_resnet_phase_is_monotone_and_lowers_the_loss(smooth, resnet_setup):
    """After Adam, 30 iterations (exact, or on the softplus-smoothed loss): the phase's
    own objective never rises; the exact loss ends below Adam's."""
    data, net = resnet_setup
    cfg = TrainConfig(
        lam=0.05,
        phases=(
            PhaseConfig("adam", 300, 1e-2),
            PhaseConfig("woodbury_newton", 30, 1.0, smooth=smooth),
            PhaseConfig("lbfgs", 0),
        ),
        dtype="float64",
        log_every=5,
    )
    res = train(net(), data, cfg, progress=False)
    rows = [r for r in res.metrics if r["phase"] == "woodbury_newton"]
    if not smooth:  # metrics rows read the exact loss: monotone only for the exact phase
        losses = [r["loss"] for r in rows]
        assert all(b <= a * (1 + 10 * EPS) for a, b in zip(losses, losses[1:]))
    adam = [r["loss"] for r in res.metrics if r["phase"] == "adam"][-1]
    assert rows[-1]["loss"] < adam


@pytest.mark.parametrize(
    ("cost", "lam", "match"),
    [("cross_entropy", 0.05, "mse"), ("mse", 0.0, "lam > 0")],
)
def test_bad_cost_or_no_weight_decay_is_a_config_error(cost, lam, match, resnet_setup):
    data, net = resnet_setup
    if cost == "cross_entropy":
        import dataclasses

        import numpy as np

        onehot = np.eye(data.d_out)[np.argmax(data.y_train, axis=1)]
        data = dataclasses.replace(data, y_train=onehot)
    cfg = TrainConfig(
        lam=lam, cost=cost, phases=(PhaseConfig("woodbury_newton", 3, 1.0),), dtype="float64"
    )
    with pytest.raises(ConfigError, match=match):
        train(net(), data, cfg, progress=False)


def test_woodbury_newton_resumes_bitwise_after_a_crash(crash_and_resume):
    """A crash between two refreshes of `M`: the resumed phase forms `M` again at the
    checkpointed anchor and ends bitwise where the uninterrupted run does."""
    cfg = TrainConfig(
        lam=0.05,
        phases=(PhaseConfig("adam", 50, 1e-2), PhaseConfig("woodbury_newton", 30, 1.0)),
        dtype="float64",
        log_every=5,
        checkpoint_every=10,
    )
    saved = crash_and_resume(cfg, at=70)
    assert saved["radius"] > 0 and saved["anchor"] is not None
