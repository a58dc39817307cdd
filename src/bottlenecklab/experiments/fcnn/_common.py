"""What the trained-FCNN experiments of paper 001 on the latent teacher share: the base
config (the latent teacher, a ReLU net with biases, `lam = 0.001`, Adam then GD with the
step divided by `L`), the smoke recipe, and the quick recipe that trains to a certified
critical point."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bottlenecklab.models import FCNNConfig
from bottlenecklab.tasks import LatentTeacherConfig
from bottlenecklab.training import PhaseConfig, TrainConfig

__all__ = ["QUICK", "SMOKE", "LatentConfig", "adam_then_gd"]


def adam_then_gd(adam_steps: int, gd_steps: int, log_every: int, **train: Any) -> TrainConfig:
    """Paper 001's schedule: Adam at `0.01 / L` (cosine), then GD at `0.1 / L` with
    backtracking, at `lam = 0.001` (`TrainConfig.lr_per_depth`); `train`: more fields."""
    phases = (
        PhaseConfig("adam", adam_steps, 0.01, "cosine"),
        PhaseConfig("sgd", gd_steps, 0.1, backtrack=True),
    )
    return TrainConfig(lam=0.001, lr_per_depth=True, phases=phases, log_every=log_every, **train)


@dataclass(frozen=True)
class LatentConfig:
    """ReLU nets on the latent teacher (`k* = 2`) at our paper-scale sizes (paper 001,
    App. E gives none; spec `depth-and-rank.md`). An experiment's `Config` subclasses it,
    may change the sizes, and adds its own fields."""

    task: LatentTeacherConfig = LatentTeacherConfig(n_train=1000, n_test=1000)
    model: FCNNConfig = FCNNConfig(depth=8, width=100, bias_scale=1.0)
    train: TrainConfig = adam_then_gd(20_000, 5000, 500, checkpoint_every=5000)
    seed: int = 0


# The smoke recipe (seconds: a tiny teacher sample, a narrow net, a few steps). Each
# experiment adds its depths.
SMOKE: dict[str, Any] = {
    "task.n_train": 32,
    "task.n_test": 16,
    "model.width": 12,
    "train.phases": (
        {"optimizer": "adam", "steps": 30, "lr": 0.01, "schedule": "cosine"},
        {"optimizer": "sgd", "steps": 10, "lr": 0.1, "backtrack": True},
    ),
    "train.log_every": 10,
}

# The smoothed continuation after L-BFGS: three L-BFGS runs of 200 at each sharpness
# beta, then trust region, longer at the smaller beta (its inner problem is better
# conditioned there); lab notes `fcnn.md`, 2026-11-28.
SMOOTHED_STAGES: tuple[dict[str, Any], ...] = tuple(
    {"optimizer": "lbfgs", "steps": 200, "lr": 1.0, "smooth": beta}
    for beta in (1e2, 1e3, 1e4, 1e5, 1e6, 1e7)
    for _ in range(3)
) + tuple(
    {"optimizer": "trust_region", "steps": steps, "lr": 1.0, "smooth": beta}
    for beta, steps in ((1e4, 200), (1e5, 200), (1e6, 100), (1e7, 100))
)

# The quick recipe to a certified critical point (`fcnn/rank-vs-depth`; minutes per net on
# one core; measured numbers and the reasons in docs/lab-notes/fcnn.md). From the spec's
# starting point (N = 256, width 48, He init, Adam 4000 + 1000 GD), changed: He init x 0.7;
# float64; Adam, then L-BFGS (Adam and GD leave the unused singular values almost
# untouched), then the smoothed continuation (L-BFGS and trust region on softplus-smoothed
# ReLUs, sharpness beta), which walks on past the kinks where exact L-BFGS stops;
# N = 128, width 32. Every net starts from its own random init.
QUICK: dict[str, Any] = {
    "task.n_train": 128,
    "task.n_test": 128,
    "model.width": 32,
    "model.init_scale": 0.7,
    "train.dtype": "float64",
    "train.lr_per_depth": False,
    "train.phases": (
        {"optimizer": "adam", "steps": 1500, "lr": 1e-3, "schedule": "cosine"},
        {"optimizer": "lbfgs", "steps": 400, "lr": 1.0},
        *SMOOTHED_STAGES,
        # exact; also the certificate's extension: value stability compares its start
        # and end (`certify.earlier = 0`)
        {"optimizer": "lbfgs", "steps": 100, "lr": 1.0},
    ),
    "train.log_every": 100,
    # the kink band must hold the last smoothing's band (|z| < 4.6 / beta at 1e7)
    "certify.tau": 1e-5,
}
