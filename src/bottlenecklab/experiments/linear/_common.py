"""What the experiments on trained deep linear networks share (papers 001, 002): the base
config (the spec's linear teacher, a bias-free linear net, its training and certificate)
and the smoke recipe. The base config is the quick recipe (the spec's quick preset)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bottlenecklab.experiments._spec import Gate
from bottlenecklab.models import FCNNConfig
from bottlenecklab.tasks import LinearTeacherConfig
from bottlenecklab.training import PhaseConfig, TrainConfig

__all__ = ["SMOKE", "LinearNetConfig"]


@dataclass(frozen=True)
class LinearNetConfig:
    """A bias-free deep linear net (width 8) on the spec's linear teacher (`X` 64x6, a 5x6
    teacher with `s = (3, 1.5, 0.4)`), trained in float64 at `lam = 1e-3`: Adam, L-BFGS,
    then a 100-step L-BFGS phase that is the certificate's extension.

    Args:
        certify: the convergence certificate of the trained claims (spec
            `convergence.md`): threshold 1e-2, the spec's default (no ReLU, no kinks: the
            stationarity is the relative gradient norm of a smooth loss); earlier state at
            the start of the last phase (the 100-step L-BFGS extension, which may stop
            early).
    """

    task: LinearTeacherConfig = LinearTeacherConfig()
    model: FCNNConfig = FCNNConfig(
        depth=2, width=8, activation="identity", bias_scale=0.0, init_scale=0.5
    )
    train: TrainConfig = TrainConfig(
        lam=1e-3,
        dtype="float64",
        phases=(
            PhaseConfig("adam", 3000, 1e-2, "cosine"),
            PhaseConfig("lbfgs", 500, 1.0),
            PhaseConfig("lbfgs", 100, 1.0),  # the extension: `certify.earlier = 0`
        ),
        log_every=100,
    )
    seed: int = 0
    certify: Gate = Gate(earlier=0.0)


# The smoke recipe (seconds: a short Adam, a few L-BFGS steps; the claims come out
# not-converged). Each experiment adds its sweep.
SMOKE: dict[str, Any] = {
    "train.phases": (
        {"optimizer": "adam", "steps": 50, "lr": 1e-2, "schedule": "cosine"},
        {"optimizer": "lbfgs", "steps": 10, "lr": 1.0},
    ),
}
