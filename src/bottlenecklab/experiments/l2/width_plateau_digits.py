"""`l2/width-plateau-digits` — paper 004, Fig 2 left.

    bottlenecklab run l2/width-plateau-digits --preset quick

As `l2/width-plateau` on images: depth-3 ReLU nets trained with L2 and mean cross-entropy
on 50 digits per class of scikit-learn's 8x8 digits (pixels / 16; test: the other 1297),
grid `model.width` x `seed` x `train.lam`. Per `lam`: best-of-seeds train loss
non-increasing within 2 %, plateau start (tol 0.1) in `[5, 20]` (004: around 10 = the
number of classes), gated by the convergence certificate of the seeds that set or nearly
tie each width's best (`_plateau.plateau_gate`).
Quick preset: about 48 min on 2 cores (93 min of point time). Pilots and measurements:
`docs/lab-notes/l2.md`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bottlenecklab.experiments._spec import Claim, Experiment, Gate, PointResult
from bottlenecklab.experiments.l2._plateau import (
    PLATEAU_UNGATED,
    SMOOTHED_STAGES,
    plateau_claims,
    plateau_measure,
    plateau_reads_per_lam,
)
from bottlenecklab.models import FCNNConfig
from bottlenecklab.tasks import DigitsTask
from bottlenecklab.training import PhaseConfig, TrainConfig

SOURCE = "004 Fig 2 left"


@dataclass(frozen=True)
class Config:
    """004 Fig 2 left: MNIST, `N = 1000` (100 per class), no `lam` given (the spec's two).

    Args: as `width_plateau.Config`, plus lams: the `train.lam` of the grid.
    """

    task: DigitsTask = DigitsTask(classes=(), per_class=100)
    model: FCNNConfig = FCNNConfig(depth=3, width=10)
    train: TrainConfig = TrainConfig(
        lam=1e-3,
        cost="cross_entropy",
        phases=(
            PhaseConfig("adam", 20_000, 1e-3),
            PhaseConfig("sgd", 10_000, 0.05, backtrack=True),
        ),
        log_every=500,
    )
    widths: tuple[int, ...] = (2, 4, 6, 8, 10, 12, 16, 24, 32, 48)
    seeds: tuple[int, ...] = (0, 1, 2)
    lams: tuple[float, ...] = (1e-3, 1e-4)
    trend_tol: float = 0.02
    plateau_tol: float = 0.1
    plateau_range: tuple[float, float] = (5.0, 20.0)
    certify: Gate = Gate(threshold=0.2, tau=1e-4, earlier=0.0)  # as width-plateau
    seed: int = 0


def claims(cfg: Config, results: list[PointResult]) -> list[Claim]:
    """Per `lam`: non-increasing best loss and the plateau start."""
    return plateau_claims(cfg, results, SOURCE)


PRESETS: dict[str, dict[str, Any]] = {
    # Seconds: 5 per class, two widths, one seed and lam, short Adam.
    "smoke": {
        "task.per_class": 5,
        "widths": (2, 4),
        "seeds": (0,),
        "lams": (1e-3,),
        "train.phases": ({"optimizer": "adam", "steps": 50, "lr": 1e-3},),
        "train.log_every": 25,
    },
    # The spec's sizes: 50 per class, 2 seeds, Adam 3k + GD 2k; then (float64) the
    # smoothed continuation of `l2/width-plateau` to a certified kinked optimum.
    "quick": {
        "task.per_class": 50,
        "seeds": (0, 1),
        "train.dtype": "float64",
        "train.phases": (
            {"optimizer": "adam", "steps": 3000, "lr": 1e-3},
            {"optimizer": "sgd", "steps": 2000, "lr": 0.05, "backtrack": True},
            *SMOOTHED_STAGES,
            # exact, restarted: a wide net can still drift toward the regularized optimum
            *({"optimizer": "lbfgs", "steps": 200, "lr": 1.0},) * 5,
            {"optimizer": "lbfgs", "steps": 100, "lr": 1.0},
        ),
        # a logged row where the last phase starts (value stability's earlier state)
        "train.log_every": 100,
    },
    # 004's sizes on the digits (MNIST needs its IDX files): 100 per class, 3 seeds.
    "paper": {},
}

EXPERIMENT = Experiment(
    name="l2/width-plateau-digits",
    source=SOURCE,
    title="Minimal L2 loss vs width on digits: plateau around the number of classes",
    config=Config(),
    presets=PRESETS,
    grid={"model.width": "widths", "seed": "seeds", "train.lam": "lams"},
    measure=plateau_measure,
    claims=claims,
    figures=("l2_width_plateau",),
    doc=__doc__ or "",
    reads=plateau_reads_per_lam(Config().lams),  # each lam's claims read its points
    ungated=PLATEAU_UNGATED,
)
