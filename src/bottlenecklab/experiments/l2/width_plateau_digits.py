"""`l2/width-plateau-digits` — paper 004, Fig 2 left.

    bottlenecklab run l2/width-plateau-digits --preset quick

As `l2/width-plateau` on images: depth-3 ReLU nets trained with L2 and mean cross-entropy
on 50 digits per class of scikit-learn's 8x8 digits (pixels / 16; test: the other 1297),
grid `model.width` x `seed` x `train.lam`. Per `lam`: best-of-seeds train loss
non-increasing within 2 %, plateau start (tol 0.1) in `[5, 20]` (004: around 10 = the
number of classes), gated by the convergence certificate of the seeds that set or nearly
tie each width's best (`_plateau.plateau_gate`).
Quick preset: two to four hours of point time (40 float64 networks with the `kink_newton`
end). Pilots and measurements: `docs/lab-notes/l2.md`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bottlenecklab.experiments._spec import Experiment
from bottlenecklab.experiments.l2._plateau import (
    CLAIMS,
    KINK_END,
    PLATEAU,
    QUICK,
    SMOKE,
    PlateauConfig,
    quick_phases,
)
from bottlenecklab.tasks import DigitsTask
from bottlenecklab.training import PhaseConfig, TrainConfig

SOURCE = "004 Fig 2 left"


@dataclass(frozen=True)
class Config(PlateauConfig):
    """004 Fig 2 left: MNIST, `N = 1000` (100 per class), no `lam` given (the spec's two).

    Args: as `PlateauConfig`, plus widths, lams: the grid's widths and `train.lam`s.
    """

    task: DigitsTask = DigitsTask(classes=(), per_class=100)
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
    lams: tuple[float, ...] = (1e-3, 1e-4)


PRESETS: dict[str, dict[str, Any]] = {
    "smoke": {**SMOKE, "task.per_class": 5, "lams": (1e-3,)},  # seconds: 5 per class, one lam
    # The spec's sizes: 50 per class, 2 seeds, Adam 3k + GD 2k; then (float64) the
    # smoothed continuation of `l2/width-plateau` and the `kink_newton` endgame.
    "quick": {
        **QUICK,
        "task.per_class": 50,
        "seeds": (0, 1),
        "train.phases": quick_phases(
            {"optimizer": "adam", "steps": 3000, "lr": 1e-3},
            {"optimizer": "sgd", "steps": 2000, "lr": 0.05, "backtrack": True},
            end=KINK_END,
        ),
    },
    # 004's sizes on the digits (MNIST needs its IDX files): 100 per class, 3 seeds.
    "paper": {},
}

EXPERIMENT = Experiment[Config](
    name="l2/width-plateau-digits",
    source=SOURCE,
    title="Minimal L2 loss vs width on digits: plateau around the number of classes",
    config=Config(),
    presets=PRESETS,
    grid={"model.width": "widths", "seed": "seeds", "train.lam": "lams"},
    measure=PLATEAU,
    claims=CLAIMS,
    per="train.lam",  # each lam's claims on its points
    figures=("_l2:l2_width_plateau",),
    doc=__doc__ or "",
)
