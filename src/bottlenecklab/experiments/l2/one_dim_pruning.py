"""`l2/one-dim-pruning` — paper 004, Prop 15, App D.2.

    bottlenecklab run l2/one-dim-pruning --preset quick

A wide shallow ReLU net trained with L2 on `N` points of `y = sin 3x` is pruned by the
spec's rule (`measure._sparsity.prune_fcnn_one_dim`: balance, drop inactive neurons, merge same-sign
neurons with the same active set): at most `2 (2N - 1) <= 4N` neurons remain, and the
width-`n_1 > 4N` net loses neurons with the training outputs unchanged and `||theta||^2`
not increased. A construction valid for any weights (no certificate). Expected: 2/2 pass.
Quick preset: ~6 s CPU. Measurements: `docs/lab-notes/l2.md`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from bottlenecklab.experiments._checks import at_most, outcome, unmeasured
from bottlenecklab.experiments._spec import ClaimSpec, Experiment, Outcome, Points, Ungated
from bottlenecklab.experiments.l2._pruning import (
    ALIVE_BEFORE,
    NEURONS_AFTER,
    NEURONS_BEFORE,
    NORM_AFTER,
    NORM_BEFORE,
    OUTPUT_CHANGE,
    PRUNING,
)
from bottlenecklab.measure import N_TRAIN
from bottlenecklab.models import FCNNConfig
from bottlenecklab.tasks import SineTask
from bottlenecklab.training import PhaseConfig, TrainConfig


@dataclass(frozen=True)
class Config:
    """Prop 15 on `y = sin 3x` (004 gives no sizes; spec quick preset).

    Args:
        output_tol: largest accepted change of the training outputs (spec table).
    """

    task: SineTask = SineTask()
    model: FCNNConfig = FCNNConfig(depth=2, width=200)
    train: TrainConfig = TrainConfig(
        lam=1e-3,
        phases=(PhaseConfig("adam", 5000, 1e-3), PhaseConfig("sgd", 2000, 0.05, backtrack=True)),
        dtype="float64",
    )
    output_tol: float = 1e-9
    seed: int = 0


def at_most_4n(cfg: Config, pts: Points) -> Outcome:
    """Neurons left after pruning, at most `2 (2N - 1) <= 4N`."""
    p = pts.last
    N = int(p.get(N_TRAIN, cfg.task.n_train))
    return at_most(p.get(NEURONS_AFTER), 4 * N, alive=p.get(ALIVE_BEFORE), N=N)


def smaller_same_outputs(cfg: Config, pts: Points) -> Outcome:
    """Prop 15's step (App D.2): a width `n_1 > 4N` net is replaced by one with strictly
    fewer neurons, the same training outputs (`output_tol`) and `||theta||^2` not larger.
    One claim: the output and norm conditions alone hold for a pruning that removes
    nothing (lab notes, vacuity audit W1). Not measured when `n_1 <= 4N` (no premise)."""
    p = pts.last
    N = int(p.get(N_TRAIN, cfg.task.n_train))
    n1, after = p.get(NEURONS_BEFORE), p.get(NEURONS_AFTER)
    change, before = p.get(OUTPUT_CHANGE), p.get(NORM_BEFORE)
    dnorm = p.get(NORM_AFTER) - before
    expected = (
        f"fewer than n_1 neurons, output change <= {cfg.output_tol:g}, ||theta||^2 change <= 0"
    )
    facts = {"n1": n1, "four_n": 4 * N, "before": before}
    if not n1 > 4 * N:
        why = f"n_1 = {n1:g} <= 4N = {4 * N}: Prop 15 removes neurons only above 4N"
        return unmeasured(why, expected, **facts)
    ok = all(math.isfinite(v) for v in (after, change, dnorm))
    ok = ok and after < n1 and change <= cfg.output_tol and dnorm <= 0.0
    measured = f"{after:g} of {n1:g} neurons, output change {change:.3g}, norm change {dnorm:.4g}"
    return outcome(expected, measured, ok, **facts)


# The pruning is a construction on any weights (Prop 15's proof): its claims hold for an
# untrained net too, so no convergence certificate applies.
AT_MOST_4N = ClaimSpec(
    "at-most-4N",
    "neurons left after pruning (of {alive:g} alive; N = {N}, bound 2(2N - 1) <= 4N)",
    Ungated("at most 2(2N - 1) active sets of a 1-D ReLU layer, for any weights"),
    at_most_4n,
)
SMALLER_SAME_OUTPUTS = ClaimSpec(
    "smaller-same-outputs",
    "pruning the width-{n1:g} net (n_1 > 4N = {four_n}): neurons after, largest change "
    "of the training outputs, ||theta||^2 after minus before (before {before:.4g})",
    Ungated(
        "dropping inactive neurons and merging same-sign neurons with the same active "
        "set keeps the outputs on the training points and never raises ||theta||^2, for "
        "any weights"
    ),
    smaller_same_outputs,
)

PRESETS: dict[str, dict[str, Any]] = {
    # Seconds: a narrow net, short Adam (the construction's claims hold for any weights).
    "smoke": {
        "model.width": 50,  # n_1 > 4N = 40: Prop 15's premise
        "train.phases": ({"optimizer": "adam", "steps": 100, "lr": 1e-2},),
        "train.log_every": 50,
    },
    # The spec's quick preset: width 200, Adam 5k + backtracking GD 2k, lam 1e-3.
    "quick": {},
    # 004 gives no sizes for this proposition: the quick ones.
    "paper": {},
}

EXPERIMENT = Experiment[Config](
    name="l2/one-dim-pruning",
    source="004 Prop 15",
    title="Prop 15: a 1-D shallow ReLU net prunes to <= 4N neurons, same outputs, smaller norm",
    config=Config(),
    presets=PRESETS,
    grid={},
    measure=PRUNING,
    claims=[AT_MOST_4N, SMALLER_SAME_OUTPUTS],
    figures=("_l2:l2_one_dim_pruning",),
    doc=__doc__ or "",
)
