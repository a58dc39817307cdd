"""`l2/counterexample` — paper 004, Prop 19, App C.1 (closed forms; two tiny GD runs).

    bottlenecklab run l2/counterexample --preset quick

A width-2 ReLU net, `X = (1, -1)^T`, `Y = (1, 1)^T`, no bias, summed cost plus
`lam ||W||^2`: the family `W_1 = W_2 = (a_1, a_2)`, `a_1^2 + a_2^2 = 1 - lam`, are local
minima of value `1 + 2 lam - lam^2`, the global minimum is `4 lam - 2 lam^2`, and the `+eps`
path from the end point `a_2 = 0` lowers the loss by `2 (1 - lam) eps^2 - eps^4` (004
prints `-eps`). Grid: the closed forms (no training) and a GD run from each start. Expected:
4/4 pass (closed forms at fixed weights: no certificate); report-only GD runs (`gd_loss`)
end at the two values. Quick preset: ~10 s CPU.
Measurements: `docs/lab-notes/l2.md`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from bottlenecklab import theory
from bottlenecklab.experiments._checks import at_least, at_most, listed
from bottlenecklab.experiments._spec import ClaimSpec, Experiment, Points, Ungated
from bottlenecklab.experiments.l2._counterexample import (
    COUNTEREXAMPLE,
    ESCAPE_ERROR,
    FAMILY_ERROR,
    GLOBAL_ERROR,
    PERTURBATION_MIN,
)
from bottlenecklab.measure import Quantity
from bottlenecklab.models import FCNNConfig, GivenFCNNConfig
from bottlenecklab.tasks import PointsTask
from bottlenecklab.training import PhaseConfig, TrainConfig

# A grid point: the closed forms (`theory`: nothing trained), or GD from a start.
Run = Literal["theory", "family", "global"]


@dataclass(frozen=True)
class Config:
    """Prop 19 at `lam`.

    Args:
        task, net: `X = (1, -1)^T`, `Y = (1, 1)^T`; the width-2 bias-free ReLU net.
        run, runs: this point (`Run`) and the grid's.
        lam: `lambda`; angles: family points checked for the value; angle: the family point
            perturbed; perturbations, perturbation: how many random perturbations of which
            size (Gaussian, per entry); epsilons: steps of the escape path; escape_sign:
            sign of `eps` on `W_2` (`+1` the spec, `-1` 004's misprint).
        value_tol, perturbation_tol, escape_tol: the claims' tolerances (spec table).
        gd_steps, gd_lr: the report-only GD runs (summed cost plus `lam ||W||^2`, run as
            mean-cost GD at `lam / 2` with step `2 gd_lr`); family_start, global_start:
            `(W_1, W_2)` starts, each `(w_1, w_2, v_1, v_2)`.
    """

    task: PointsTask = PointsTask(x=(1.0, -1.0), y=(1.0, 1.0))
    net: FCNNConfig = FCNNConfig(depth=2, width=2, bias_scale=0.0)
    run: Run = "theory"
    runs: tuple[Run, ...] = ("theory", "family", "global")
    lam: float = 0.1
    angles: tuple[float, ...] = (0.2, 0.5, 0.785, 1.1, 1.4)
    angle: float = 0.7
    perturbations: int = 20_000
    perturbation: float = 1e-3
    epsilons: tuple[float, ...] = (1e-2, 1e-3)
    escape_sign: float = 1.0
    value_tol: float = 1e-10
    perturbation_tol: float = 1e-12
    escape_tol: float = 1e-6
    gd_steps: int = 4000
    gd_lr: float = 0.05
    family_start: tuple[float, ...] = (0.5, 0.6, 0.4, 0.7)
    global_start: tuple[float, ...] = (0.5, -0.6, 0.4, 0.7)
    seed: int = 0

    @property
    def model(self) -> GivenFCNNConfig:
        """The net at this point's start (the family start for `theory`, which trains not)."""
        start = self.global_start if self.run == "global" else self.family_start
        return GivenFCNNConfig(self.net, start)

    @property
    def train(self) -> TrainConfig:
        """Summed-cost GD at `lam`, as mean-cost GD at `lam / 2` with step `2 gd_lr` (none
        for `theory`)."""
        steps = 0 if self.run == "theory" else self.gd_steps
        return TrainConfig(
            lam=self.lam / 2,
            phases=(PhaseConfig("sgd", steps, 2 * self.gd_lr),),
            dtype="float64",
            log_every=max(1, steps),
        )


def theory_value(pts: Points, quantity: Quantity) -> float:
    """`quantity` at the closed forms' point (the only point the claims read)."""
    return float(pts.last.get(quantity))


# The claims read the closed forms' point only (`where`): a diverged GD run (report only)
# does not make them not-measured.
CLOSED_FORM = Ungated(
    "closed forms of the loss at given weights: no network is trained", where={"run": "theory"}
)
FAMILY_VALUE = ClaimSpec(
    "family-value",
    "the family W_1 = W_2 = (a_1, a_2), a_1^2 + a_2^2 = 1 - lam has loss "
    "1 + 2 lam - lam^2 = {family:.6g}: largest |error| over {n_angles} points",
    CLOSED_FORM,
    lambda cfg, pts: at_most(
        theory_value(pts, FAMILY_ERROR),
        cfg.value_tol,
        family=theory.counterexample_values(cfg.lam)[0],
        n_angles=len(cfg.angles),
    ),
)
GLOBAL_VALUE = ClaimSpec(
    "global-value",
    "W_1 = (a, -a), W_2 = (a, a), a^2 = 1 - lam has loss 4 lam - 2 lam^2 = {glob:.6g}: |error|",
    CLOSED_FORM,
    lambda cfg, pts: at_most(
        theory_value(pts, GLOBAL_ERROR),
        cfg.value_tol,
        glob=theory.counterexample_values(cfg.lam)[1],
    ),
)
FAMILY_LOCAL_MIN = ClaimSpec(
    "family-local-min",
    "{cfg.perturbations} random perturbations of size {cfg.perturbation:g} of the "
    "family point at angle {cfg.angle:g}: smallest loss change",
    CLOSED_FORM,
    lambda cfg, pts: at_least(theory_value(pts, PERTURBATION_MIN), 0.0, tol=cfg.perturbation_tol),
)
ESCAPE_PATH = ClaimSpec(
    "escape-path",
    "the +eps path from a_2 = 0 changes the loss by -2(1 - lam) eps^2 + eps^4 "
    "(eps = {eps}): largest relative error",
    CLOSED_FORM,
    lambda cfg, pts: at_most(
        theory_value(pts, ESCAPE_ERROR), cfg.escape_tol, eps=listed(cfg.epsilons, "g")
    ),
    source="004 App C.1",
)


PRESETS: dict[str, dict[str, Any]] = {
    # Seconds: fewer perturbations, short GD.
    "smoke": {"perturbations": 500, "gd_steps": 50},
    # The spec's quick preset (20k perturbations; GD 4k steps at lr 0.05).
    "quick": {},
    # Closed forms: the paper has no sizes; the quick ones.
    "paper": {},
}

EXPERIMENT = Experiment[Config](
    name="l2/counterexample",
    source="004 Prop 19",
    title="Prop 19: a family of local minima of L that are no local minima of L^k",
    config=Config(),
    presets=PRESETS,
    grid={"run": "runs"},
    measure=COUNTEREXAMPLE,
    claims=[FAMILY_VALUE, GLOBAL_VALUE, FAMILY_LOCAL_MIN, ESCAPE_PATH],
    figures=("_l2:l2_counterexample",),
    doc=__doc__ or "",
)
