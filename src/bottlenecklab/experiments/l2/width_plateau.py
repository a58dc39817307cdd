"""`l2/width-plateau` — paper 004, Fig 2 right.

    bottlenecklab run l2/width-plateau --preset quick

Depth-3 ReLU nets of equal hidden widths are trained with L2 (Adam, then backtracking GD)
on a bias-free ReLU teacher `x ~ N(0, I_50)` -> widths (50, 10, 10, 10) (MSE) at several
widths and seeds (grid `model.width` x `seed`; the data are fixed). The minimal loss is
non-increasing in width (Prop 6) and reaches a plateau (Prop 7, Cor 9; 004: "around 10").
Claims: best-of-seeds train loss non-increasing within 2 %, plateau start (tol 0.1) in
`[5, 20]`, gated on the largest gradient norm of the best runs.

Measured (quick preset = the spec's starting point, 2026-11-24, 0/2 claims pass; 10 min
41 s wall, 2 min 0 s CPU, at load ~13 on 2 shared cores). Best-of-3-seeds loss (with L2)
per width 2, 4, 6, 8, 10, 12, 16, 24, 32: 6.62, 3.32, 2.54, 1.06, 0.147, 0.830, 0.409,
0.339, 0.188 (test data cost of the best: 7.59, 4.51, 5.39, 2.01, 0.302, 2.73, 2.25,
4.04, 6.29); plateau start (tol 0.1) 10, in [5, 20], but the loss rises after width 10 and
neither claim counts: FAILING, not converged (gradient norms 0.05-0.55 after Adam 3k +
GD 2k; gate 1e-2). The width-10 seed-1 run found a far better point (0.147) than every
wider run: the wide nets are unconverged, not worse. A float64 pilot with Adam 3k +
L-BFGS 1500 (seed 0) reaches 0.034 at width 10 (gradient norm 3.8e-2) and 0.088 at
width 32 (3.0e-2), still falling: at lam = 1e-4 on this teacher the quick budget does not
reach the minima; much longer training (or a larger lam) is needed, not a looser gate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bottlenecklab.experiments._spec import Claim, Experiment, PointResult
from bottlenecklab.experiments.l2._plateau import plateau_claims, plateau_measure
from bottlenecklab.models import FCNNConfig
from bottlenecklab.tasks import ReluTeacherTask
from bottlenecklab.training import PhaseConfig, TrainConfig

SOURCE = "004 Fig 2 right"


@dataclass(frozen=True)
class Config:
    """004 Fig 2 right: `N = 1000`, `lam = 1e-6`, 3 trials (no schedule given).

    Args:
        widths, seeds: the grid; trend_tol: allowed relative rise of the best loss between
        widths; plateau_tol, plateau_range: the plateau's tolerance and accepted start;
        max_grad_norm: convergence gate.
    """

    task: ReluTeacherTask = ReluTeacherTask(n_train=1000)
    model: FCNNConfig = FCNNConfig(depth=3, width=10)
    train: TrainConfig = TrainConfig(
        lam=1e-6,
        phases=(
            PhaseConfig("adam", 20_000, 1e-3),
            PhaseConfig("sgd", 10_000, 0.05, backtrack=True),
        ),
        log_every=500,
    )
    widths: tuple[int, ...] = (2, 4, 6, 8, 10, 12, 16, 24, 32, 48, 64)
    seeds: tuple[int, ...] = (0, 1, 2)
    trend_tol: float = 0.02
    plateau_tol: float = 0.1
    plateau_range: tuple[float, float] = (5.0, 20.0)
    max_grad_norm: float = 1e-2
    seed: int = 0


def claims(cfg: Config, results: list[PointResult]) -> list[Claim]:
    """Non-increasing best loss and the plateau start (`_plateau.plateau_claims`)."""
    return plateau_claims(cfg, results, SOURCE)


PRESETS: dict[str, dict[str, Any]] = {
    # Seconds: few samples, two widths, one seed, short Adam.
    "smoke": {
        "task.n_train": 50,
        "task.n_test": 50,
        "widths": (2, 4),
        "seeds": (0,),
        "train.phases": ({"optimizer": "adam", "steps": 50, "lr": 1e-3},),
        "train.log_every": 25,
    },
    # The spec's quick preset: N = 500, lam = 1e-4, widths 2-32, 3 seeds, Adam 3k + GD 2k.
    "quick": {
        "task.n_train": 500,
        "train.lam": 1e-4,
        "widths": (2, 4, 6, 8, 10, 12, 16, 24, 32),
        "train.phases": (
            {"optimizer": "adam", "steps": 3000, "lr": 1e-3},
            {"optimizer": "sgd", "steps": 2000, "lr": 0.05, "backtrack": True},
        ),
    },
    # 004's sizes: N = 1000, lam = 1e-6, 3 trials.
    "paper": {},
}

EXPERIMENT = Experiment(
    name="l2/width-plateau",
    source=SOURCE,
    title="Minimal L2 loss is non-increasing in width and plateaus (teacher, ~10)",
    config=Config(),
    presets=PRESETS,
    grid={"model.width": "widths", "seed": "seeds"},
    measure=plateau_measure,
    claims=claims,
    figures=("l2_width_plateau",),
    doc=__doc__ or "",
)
