"""`talk/newtonian-cnn` — paper 002, slide 'Learning Newtonian Mechanics'.

    bottlenecklab run talk/newtonian-cnn --preset quick

A circular CNN (`models.CircularCNN`: full-size kernels applied by FFT, ReLU, last layer
linear) predicts the next frame of a ball falling on the torus from the last two frames
(`tasks.ball_gravity`). The slide: it learns the physics, and its middle layers keep
only a few low-frequency modes — position and velocity in two frequency-1 pairs.

Expected (quick preset: 8x8 frames, L = 6, 8 channels, lam = 3e-2): next-step test cost
~0.014 x that of repeating the last frame; the middle-third layers keep 3 modes, all of
order <= 1 (`+-(0, 1)`, `+-(1, 0)`, `(0, 0)`). ~11 min wall at load 5-10, 4.5 min CPU.
Pilots and measured numbers: `docs/lab-notes/talk.md`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bottlenecklab.experiments._checks import at_least, at_most
from bottlenecklab.experiments._spec import (
    ClaimSpec,
    Experiment,
    Gate,
    Outcome,
    Points,
    Reads,
)
from bottlenecklab.experiments.talk._cnn import (
    BASELINE_TEST_COST,
    CNN,
    MIDDLE_LAYERS,
    MIDDLE_LOW_MODE_LAYERS,
    RELATIVE_TEST_COST,
)
from bottlenecklab.measure._frequency import MODE_RULE
from bottlenecklab.models import CircularCNNConfig
from bottlenecklab.tasks import BallGravityConfig
from bottlenecklab.training import PhaseConfig, TrainConfig


@dataclass(frozen=True)
class Config:
    """The slide's experiment at the spec's sizes.

    Args:
        baseline_fraction: bound on test cost / repeat-last-frame test cost.
        mode_rel: a mode counts when `s_{omega, i} >= mode_rel x` the layer's largest (the
            cutoff of `MODE_RULE`, the rule of the mode counts).
        max_modes, max_order: at most this many modes, all of order at most this.
        rollout_steps: steps of the rollout figure.
        rollout_samples: test samples of the rollout figure.
        certify: the convergence certificate of both claims (stationarity <= 0.1).
    """

    task: BallGravityConfig = BallGravityConfig()
    model: CircularCNNConfig = CircularCNNConfig(depth=8, channels=12, size=16)
    train: TrainConfig = TrainConfig(
        lam=1e-4,
        phases=(
            PhaseConfig("adam", 10_000, 1e-3, schedule="cosine"),
            PhaseConfig("sgd", 2000, 1e-3, backtrack=True),
        ),
        log_every=100,
    )
    seed: int = 0
    baseline_fraction: float = 0.25
    mode_rel: float = MODE_RULE.cutoff
    max_modes: int = 8
    max_order: int = 1
    rollout_steps: int = 10
    rollout_samples: int = 3
    certify: Gate = Gate(threshold=0.1)


BASE = Config()  # its tolerances are the claims' windows
COUNT_STEP = 1.0  # the window of a count of layers: it may not change at all


def next_step(cfg: Config, pts: Points) -> Outcome:
    """Next-step test cost over the repeat-last-frame baseline's."""
    p = pts.last
    return at_most(
        p.value(RELATIVE_TEST_COST), cfg.baseline_fraction, base=p.value(BASELINE_TEST_COST)
    )


def middle_low_modes(cfg: Config, pts: Points) -> Outcome:
    """Middle-third layers with few low-order modes: a majority of them."""
    p = pts.last
    n_mid = int(p.value(MIDDLE_LAYERS))
    return at_least(p.value(MIDDLE_LOW_MODE_LAYERS), n_mid // 2 + 1, n_mid=n_mid)


NEXT_STEP = ClaimSpec(
    "next-step",
    "next-step test cost / test cost of repeating the last frame ({base:.3g})",
    Reads((RELATIVE_TEST_COST,), window=BASE.baseline_fraction),  # bound above 0
    next_step,
)
MIDDLE_LOW_MODES = ClaimSpec(
    "middle-low-modes",
    "middle-third layers (of {n_mid}) with <= {cfg.max_modes} modes s_(w,i) >= "
    "{cfg.mode_rel:g} x the layer's largest, all of order <= {cfg.max_order} (table "
    "modes); a majority needed",
    Reads((MIDDLE_LOW_MODE_LAYERS,), window=COUNT_STEP),
    middle_low_modes,
)
CLAIMS = [NEXT_STEP, MIDDLE_LOW_MODES]

PRESETS: dict[str, dict[str, Any]] = {
    # Seconds: 8x8 frames, a 3-layer net with 4 channels, a few steps.
    "smoke": {
        "task.size": 8,
        "task.sigma": 1.0,
        "task.n_train": 32,
        "task.n_test": 8,
        "model.size": 8,
        "model.depth": 3,
        "model.channels": 4,
        "rollout_steps": 3,
        "rollout_samples": 2,
        "train.phases": ({"optimizer": "adam", "steps": 10, "lr": 1e-3},),
        "train.log_every": 5,
    },
    # 8x8 frames, the ball's sizes halved, L = 6, 8 channels, lam = 3e-2 (lab notes).
    "quick": {
        "task.size": 8,
        "task.sigma": 0.75,
        "task.v_max": 0.75,
        "task.gravity": 0.1,
        "task.n_train": 256,
        "task.n_test": 128,
        "model.size": 8,
        "model.depth": 6,
        "model.channels": 8,
        "train.lam": 3e-2,
        "train.phases": (
            {"optimizer": "adam", "steps": 6000, "lr": 3e-3, "schedule": "cosine"},
            {"optimizer": "sgd", "steps": 500, "lr": 1e-3, "backtrack": True},
        ),
    },
    "paper": {},
}

EXPERIMENT = Experiment[Config](
    name="talk/newtonian-cnn",
    source="002 'Learning Newtonian Mechanics'",
    title="A circular CNN learns a falling ball with a few frequency-1 modes in the middle",
    config=BASE,
    presets=PRESETS,
    grid={},
    measure=CNN,
    claims=CLAIMS,
    figures=("_talk:newtonian_rollout", "_talk:newtonian_modes"),
    doc=__doc__ or "",
)
