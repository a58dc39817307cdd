"""`l2/width-plateau` — paper 004, Fig 2 right.

    bottlenecklab run l2/width-plateau --preset quick

Depth-3 ReLU nets of equal hidden widths trained with L2 (float64; Adam, restarted L-BFGS,
trust region on smoothed ReLUs, Newton on the kink manifold) on a bias-free ReLU teacher
`x ~ N(0, I_50)` -> (50, 10, 10, 10), grid `model.width` x `seed`. The minimal loss is
non-increasing in width (Prop 6) and plateaus (Prop 7, Cor 9; 004: "around 10"):
best-of-seeds loss non-increasing within 2 %, plateau start (tol 0.1) in `[5, 20]`, gated by
the convergence certificate of the seeds that set or nearly tie each width's best
(`_plateau.plateau_gate`). Quick preset: about 31 min of point time (16 on 2 cores). Pilots
and measurements: `docs/lab-notes/l2.md`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bottlenecklab.experiments._spec import Experiment
from bottlenecklab.experiments.l2._plateau import (
    CLAIMS,
    PLATEAU,
    QUICK,
    SMOKE,
    PlateauConfig,
    quick_phases,
)
from bottlenecklab.tasks import ReluTeacherTask
from bottlenecklab.training import PhaseConfig, TrainConfig

SOURCE = "004 Fig 2 right"


@dataclass(frozen=True)
class Config(PlateauConfig):
    """004 Fig 2 right: `N = 1000`, `lam = 1e-6`, 3 trials (no schedule given).

    Args: as `PlateauConfig`, plus widths: the grid's widths.
    """

    task: ReluTeacherTask = ReluTeacherTask(n_train=1000)
    train: TrainConfig = TrainConfig(
        lam=1e-6,
        phases=(
            PhaseConfig("adam", 20_000, 1e-3),
            PhaseConfig("sgd", 10_000, 0.05, backtrack=True),
        ),
        log_every=500,
    )
    widths: tuple[int, ...] = (2, 4, 6, 8, 10, 12, 16, 24, 32, 48, 64)


PRESETS: dict[str, dict[str, Any]] = {
    "smoke": {**SMOKE, "task.n_train": 50, "task.n_test": 50},  # seconds: few samples
    # The spec's sizes (N = 500, lam = 1e-4, widths 2-32, 3 seeds), float64.
    "quick": {
        **QUICK,
        "task.n_train": 500,
        "train.lam": 1e-4,
        # He init at scale 0.5: at full scale widths 24-32 fit the train set, not the teacher
        "model.init_scale": 0.5,
        "widths": (2, 4, 6, 8, 10, 12, 16, 24, 32),
        # Adam 1k, then 5 restarted L-BFGS runs of 200 (one long run stalls; Adam 3k +
        # GD 2k ended far above), then the smoothed continuation, which walks past the
        # kinks where L-BFGS and exact Newton stop, and the exact end (as the digits).
        "train.phases": quick_phases(
            {"optimizer": "adam", "steps": 1000, "lr": 1e-3},
            *({"optimizer": "lbfgs", "steps": 200, "lr": 1.0},) * 5,
        ),
    },
    # 004's sizes: N = 1000, lam = 1e-6, 3 trials.
    "paper": {},
}

EXPERIMENT = Experiment[Config](
    name="l2/width-plateau",
    source=SOURCE,
    title="Minimal L2 loss is non-increasing in width and plateaus (teacher, ~10)",
    config=Config(),
    presets=PRESETS,
    grid={"model.width": "widths", "seed": "seeds"},
    measure=PLATEAU,
    claims=CLAIMS,
    per="train.lam",
    figures=("_l2:l2_width_plateau",),
    doc=__doc__ or "",
)
