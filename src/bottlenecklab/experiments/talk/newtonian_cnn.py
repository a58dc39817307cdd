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

import torch

from bottlenecklab.experiments._checks import at_least, at_most
from bottlenecklab.experiments._spec import (
    ClaimSpec,
    Experiment,
    Gate,
    Measurement,
    Outcome,
    Points,
    Reads,
)
from bottlenecklab.measure import ball_rollout, costs, frequency_spectra, mode_table
from bottlenecklab.models import CircularCNNConfig
from bottlenecklab.tasks import BallGravityConfig, Dataset
from bottlenecklab.training import PhaseConfig, TrainConfig


@dataclass(frozen=True)
class Config:
    """The slide's experiment at the spec's sizes.

    Args:
        baseline_fraction: bound on test cost / repeat-last-frame test cost.
        mode_rel: a mode counts when `s_{omega, i} >= mode_rel x` the layer's largest.
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
    mode_rel: float = 0.1
    max_modes: int = 8
    max_order: int = 1
    rollout_steps: int = 10
    rollout_samples: int = 3
    certify: Gate = Gate(threshold=0.1)


BASE = Config()  # its tolerances are the claims' windows
COUNT_STEP = 1.0  # the window of a count of layers: it may not change at all


def measure(model: torch.nn.Module, data: Dataset, cfg: Config) -> Measurement:
    """Costs vs the repeat-last-frame baseline, modes of every layer (table `modes`),
    all `s_{omega, i}` (`spectra`, with the order), and a rollout (table `rollout`)."""
    n = cfg.task.size
    scalars = costs(model, data)
    last = data.x_test[:, n * n :]
    scalars["baseline_test_cost"] = float(((data.y_test - last) ** 2).sum(axis=1).mean())
    scalars["relative_test_cost"] = scalars["test_cost"] / scalars["baseline_test_cost"]
    L = model.depth
    modes, layers = mode_table(model, cfg.mode_rel)
    middle = [r for r in layers if L / 3 < r["layer"] <= 2 * L / 3]
    ok = [r for r in middle if r["modes"] <= cfg.max_modes and r["max_order"] <= cfg.max_order]
    scalars["middle_layers"] = float(len(middle))
    scalars["middle_low_mode_layers"] = float(len(ok))
    task = cfg.task
    truth, pred = ball_rollout(
        model, data, cfg.rollout_steps, cfg.rollout_samples, task.gravity, task.sigma
    )
    scalars["rollout_error_last"] = float(
        ((pred[:, -1] - truth[:, -1]) ** 2).sum(axis=(1, 2)).mean()
    )
    roll = [
        {
            "sample": a,
            "step": t,
            "kind": kind,
            "pixels": ",".join(f"{x:.4g}" for x in frame.ravel()),
        }
        for kind, frames in (("truth", truth), ("prediction", pred))
        for a in range(len(truth))
        for t, frame in enumerate(frames[a])
    ]
    return Measurement(
        scalars=scalars,
        layers=layers,
        spectra=frequency_spectra(model),
        tables={"modes": modes, "rollout": roll},
    )


def next_step(cfg: Config, pts: Points) -> Outcome:
    """Next-step test cost over the repeat-last-frame baseline's."""
    sc = pts.last.scalars
    return at_most(sc["relative_test_cost"], cfg.baseline_fraction, base=sc["baseline_test_cost"])


def middle_low_modes(cfg: Config, pts: Points) -> Outcome:
    """Middle-third layers with few low-order modes: a majority of them."""
    sc = pts.last.scalars
    n_mid = int(sc["middle_layers"])
    return at_least(sc["middle_low_mode_layers"], n_mid // 2 + 1, n_mid=n_mid)


CLAIMS = [
    ClaimSpec(
        "next-step",
        "next-step test cost / test cost of repeating the last frame ({base:.3g})",
        Reads(("relative_test_cost",), window=BASE.baseline_fraction),  # bound above 0
        next_step,
    ),
    ClaimSpec(
        "middle-low-modes",
        "middle-third layers (of {n_mid}) with <= {cfg.max_modes} modes s_(w,i) >= "
        "{cfg.mode_rel:g} x the layer's largest, all of order <= {cfg.max_order} (table "
        "modes); a majority needed",
        Reads(("middle_low_mode_layers",), window=COUNT_STEP),
        middle_low_modes,
    ),
]

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
    measure=measure,
    claims=CLAIMS,
    figures=("_talk:newtonian_rollout", "_talk:newtonian_modes"),
    doc=__doc__ or "",
)
