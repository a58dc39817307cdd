"""`l2/width-plateau-digits` — paper 004, Fig 2 left.

    bottlenecklab run l2/width-plateau-digits --preset quick

As `l2/width-plateau` on images: depth-3 ReLU nets trained with L2 and mean cross-entropy
on 50 digits per class of scikit-learn's 8x8 digits (pixels / 16; test: the other 1297),
grid `model.width` x `seed` x `train.lam`. Per `lam`: best-of-seeds train loss non-increasing
within 2 %, plateau start (tol 0.1) in `[5, 20]` (004: around 10 = the number of classes),
gated on the largest gradient norm of the best runs.

Measured (quick preset = the spec's starting point, 2026-11-24, 0/4 claims pass; 13 min
56 s wall, 3 min 57 s CPU, at load ~13 on 2 shared cores, 40 runs). Best-of-2-seeds loss
(with L2) per width 2, 4, 6, 8, 10, 12, 16, 24, 32, 48:
lam = 1e-3: 0.989, 0.243, 0.145, 0.136, 0.133, 0.130, 0.129, 0.129, 0.125, 0.124
(non-increasing; plateau start 10, in [5, 20]; test cost of the best 1.12 -> 0.152);
lam = 1e-4: 0.849, 0.065, 0.028, 0.021, 0.021, 0.020, 0.020, 0.021, 0.020, 0.020
(plateau start 8; a 2.5 % rise from width 16 to 24 breaks the 2 % trend). Merged neuron
counts equal the widths within 1-4 (the first layer of a trained net barely merges).
FAILING on the convergence gate: the best width-2 runs end at gradient norm 3.4e-2 and
5.2e-2 (width 4 at lam = 1e-4: 1.5e-2; every width >= 6 is below 1.2e-2, most below 6e-3;
gate 1e-2) after Adam 3k + GD 2k.

Width 2 does not converge in the gradient norm with any recipe tried (2026-11-24 pilots,
float64, seed 0 unless stated): Adam 2k + L-BFGS 1k ends at loss 0.663 (lam 1e-4) with
gradient norm 3.9e-2; Adam 1k + 6 restarted L-BFGS runs of 300 iterations ends with the
loss unchanged in 5 digits over the last 100 iterations (0.79749 at lam 1e-4, 0.79118 at
lam 1e-3) and the gradient norm at 6.0e-2 and 5.1e-2. These are ReLU kinks, not slow
convergence (Adam 1k + 4 x 300 L-BFGS): the gradient norm, 5.0e-2, sits in the first
layer's weights; 1-3 pre-activations lie within 1e-6 of 0 (more within 1e-4); the loss
rises along the negative gradient already at step 1e-5 (seed 0, lam 1e-3: +5.8e-7) or
1e-6 (seed 1, lam 1e-4: +3.4e-9); the smallest subgradient over the exact-kink entries
still has norm 4.0e-2 (both). A gradient-norm gate cannot be met at such points; the gate
(1e-2) is kept and the claims fail as unconverged. Width 4 (lam 1e-4) reaches 4.1e-3 with
Adam 2k + L-BFGS 1k, so the narrowest width alone blocks the gate. The quick preset is
left as measured above: the L-BFGS recipes cost about twice the CPU and would not change
the verdicts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bottlenecklab.experiments._spec import Claim, Experiment, Gate, PointResult
from bottlenecklab.experiments.l2._plateau import PLATEAU_READS, plateau_claims, plateau_measure
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
    certify: Gate = Gate(threshold=1e-2, tau=1e-6, earlier=0.0)
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
    # The spec's quick preset: 50 per class, 2 seeds, Adam 3k + GD 2k.
    "quick": {
        "task.per_class": 50,
        "seeds": (0, 1),
        "train.phases": (
            {"optimizer": "adam", "steps": 3000, "lr": 1e-3},
            {"optimizer": "sgd", "steps": 2000, "lr": 0.05, "backtrack": True},
        ),
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
    reads=PLATEAU_READS,
)
