"""`l2/attraction-repulsion` — paper 004, §3.1, Fig 1.

    bottlenecklab run l2/attraction-repulsion --preset quick

A depth-3 ReLU net (widths 50) trained with L2 (float64; Adam, L-BFGS, then Newton on the
kink manifold) on 14 digits each of 7, 8, 9 (8x8 digits, mean cross-entropy). Per hidden
layer: the attraction and the repulsion balance on the feasible directions `T_l` (cosine of
their projections < -0.95, with `||Pi_T A|| / ||A|| >= 0.2`); the neurons lie on few rays in
the 2-D uncentered PCA (<= 6; 004 shows 3; in full dimension asserted at layer 2); layer-2
points cluster by digit. Expected: every claim passes at the preset's seed 0 (seeds 1 and 2
do not: the balance at layer 2 is vacuous or still moving). Quick preset: about 1 min on one
core. Pilots, measurements and the derivation of the constraint reaction:
`docs/lab-notes/l2.md`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bottlenecklab.experiments._checks import at_most, in_range, reported
from bottlenecklab.experiments._spec import ClaimSpec, Experiment, Gate, Outcome, Points, Reads
from bottlenecklab.experiments.l2._forces import (
    CENTROID_ACCURACY,
    COS,
    COS_REACTION,
    COS_T,
    COS_T_AT,
    DIM_T,
    FAMILIES,
    FORCES,
    LAYERS,
    PROJ_A,
    RAYS,
    RAYS2D,
    RESIDUAL,
    RESIDUAL10,
)
from bottlenecklab.measure import Quantity
from bottlenecklab.models import FCNNConfig
from bottlenecklab.tasks import DigitsTask
from bottlenecklab.training import PhaseConfig, TrainConfig


@dataclass(frozen=True)
class Config:
    """Fig 1 (004: MNIST 7/8/9, 14 per class, widths 50; no lam, lr, beta, eps given).

    Args:
        ridge: `eps / (Tr K^s / N)` of the forces (spec Decision: 1e-6).
        cuts: column spaces of `Zs` cut at `s^2 > c eps`: the asserted `c` first, then the
            reported ones (spec Decision: 3; 1 and 10).
        cos_bound: the cosine of `Pi_T A_l`, `Pi_T R_l` must be below this on every hidden
            layer; min_projected: with `||Pi_T A_l|| / ||A_l||` at least this (not vacuous).
        ray_cosine, dead_rel, ray_mass: grouping of neurons into rays, the dead-neuron cut
            (full-dimension count), the share of `sum ||w_i|| ||v_i||` the 2-D groups hold.
        max_rays: rays allowed per hidden layer (spec: <= 6; 004 shows 3).
        certify: the convergence certificate (spec `convergence.md`): nonsmooth
            stationarity <= 0.1 of the regularization force: L-BFGS-converged quick nets
            sit on kinks at 0.018-0.047, the Adam-only net 0.26, untrained 35 (lab notes);
            the earlier state is the start of the last (`kink_newton` restart) phase.
    """

    task: DigitsTask = DigitsTask()
    model: FCNNConfig = FCNNConfig(depth=3, width=50)
    train: TrainConfig = TrainConfig(
        lam=1e-3,
        cost="cross_entropy",
        phases=(PhaseConfig("sgd", 20_000, 0.05, backtrack=True),),
        dtype="float64",
        log_every=500,
    )
    ridge: float = 1e-6
    cuts: tuple[float, ...] = (3.0, 1.0, 10.0)
    cos_bound: float = -0.95
    min_projected: float = 0.2
    ray_cosine: float = 0.98
    dead_rel: float = 1e-4
    ray_mass: float = 0.95
    max_rays: int = 6
    certify: Gate = Gate(threshold=0.1, tau=1e-6, earlier=0.0)
    seed: int = 0


Check = Callable[[Config, Points], Outcome]
Family = dict[int, Quantity]  # one quantity per hidden layer (`_forces.FAMILIES`)


def at_layer(pts: Points, family: Family, layer: int) -> float:
    """`family`'s quantity at hidden layer `layer` of the trained net (`nan` when absent)."""
    return float(pts.last.get(family[layer]))


def balance(layer: int) -> Check:
    """The projected cosine of `A_l`, `R_l` at most `cos_bound`, with `||Pi_T A|| / ||A||`
    at least `min_projected` (else vacuous: failed)."""

    def check(cfg: Config, pts: Points) -> Outcome:
        proj = at_layer(pts, PROJ_A, layer)
        facts = {
            "dimT": at_layer(pts, DIM_T, layer),
            "cos": at_layer(pts, COS, layer),
            "residual": at_layer(pts, RESIDUAL, layer),
            "residual10": at_layer(pts, RESIDUAL10, layer),
        }
        o = at_most(at_layer(pts, COS_T, layer), cfg.cos_bound, layer=layer, proj=proj, **facts)
        if proj >= cfg.min_projected:
            return o
        return dataclasses.replace(
            o,
            expected=f"{o.expected}; ||Pi_T A|| / ||A|| >= {cfg.min_projected:g}",
            measured=f"{o.measured} (vacuous: ||Pi_T A|| / ||A|| = {proj:.3g})",
            passed=False,
            margin=None,
        )

    return check


def layer_value(family: Family, layer: int, bounded: bool = False) -> Check:
    """`family` at hidden layer `layer`: at most `max_rays` when `bounded`, else reported;
    every family's value at the layer fills the statement (by its key)."""

    def check(cfg: Config, pts: Points) -> Outcome:
        facts = {key: at_layer(pts, fam, layer) for key, fam in FAMILIES.items()}
        v = at_layer(pts, family, layer)
        if bounded:
            return at_most(v, cfg.max_rays, layer=layer, **facts)
        return reported(v, layer=layer, **facts)

    return check


BASE = Config()
TOP = LAYERS[-1]  # the last hidden layer (`BASE.model.depth - 1`)
# Each claim's quantities, with its tolerance window (value stability: 1/4 of it): the
# cosine in [-1, cos_bound], the vacuity ratio read with the same; ray counts 0..6.
BALANCE_READS = Reads(tuple(f[l] for f in (COS_T, PROJ_A) for l in LAYERS), 1 + BASE.cos_bound)
BALANCE = {
    l: ClaimSpec(
        f"balance-layer{l}",
        "layer {layer}: cosine of the attraction and repulsion projected on the "
        "feasible directions T_l (cut s^2 > {cfg.cuts[0]:g} eps; dim T = {dimT:g}), "
        "with ||Pi_T A|| / ||A|| = {proj:.3g} >= {cfg.min_projected:g}; unprojected "
        "cosine {cos:.3g}, ||A+R||/||A|| = {residual:.3g} at eps, {residual10:.3g} at "
        "10 eps",
        BALANCE_READS,
        balance(l),
        source="004 §3.1, Prop 1 (derived; spec Decision)",
    )
    for l in LAYERS
}
BALANCE_AT = {  # (cut, layer) -> the balance at the reported cuts
    (c, l): ClaimSpec(
        f"balance-c{c:g}-layer{l}",
        "layer {layer}: the projected cosine with the column spaces cut at "
        f"s^2 > {c:g} eps (||Pi_T A|| / ||A|| = {{projA_c{c:g}:.3g}})",
        None,
        layer_value(COS_T_AT[c], l),
        source="004 §3.1 (spec Decision)",
    )
    for c in BASE.cuts[1:]
    for l in LAYERS
}
REACTION = {
    l: ClaimSpec(
        f"reaction-layer{l}",
        "layer {layer}: cosine of A_l + R_l with the constraint reaction N_l",
        None,
        layer_value(COS_REACTION, l),
        source="004 §3.1 (derived; spec Decision)",
    )
    for l in LAYERS
}
RAYS_2D = {
    l: ClaimSpec(
        f"rays-layer{l}",
        "layer {layer}: rays in the 2-D uncentered PCA of the neurons (fewest groups at "
        "cosine > {cfg.ray_cosine:g} holding {cfg.ray_mass:.0%} of sum ||w|| ||v||; "
        "merged count {merged:g}, Rank K_l = {rank_K:g})",
        Reads(tuple(RAYS2D.values()), BASE.max_rays),
        layer_value(RAYS2D, l, bounded=True),
    )
    for l in LAYERS
}
RAYS_FULL = {  # in full dimension: asserted at the last hidden layer, reported below it
    l: ClaimSpec(
        f"rays-full-layer{l}",
        "layer {layer}: rays of the alive neurons in full dimension (cosine > {cfg.ray_cosine:g})",
        Reads((RAYS[l],), BASE.max_rays) if l == TOP else None,
        layer_value(RAYS, l, bounded=l == TOP),
    )
    for l in LAYERS
}
CLUSTER = ClaimSpec(
    "cluster",
    "layer {layer}: 2-D nearest-centroid accuracy of the data points by digit (layer 1: "
    "{acc1:.3g})",
    Reads((CENTROID_ACCURACY[TOP],), 0.1),  # 1/4: one point of 42
    lambda cfg, pts: in_range(
        at_layer(pts, CENTROID_ACCURACY, TOP),
        1.0,
        1.0,
        layer=TOP,
        acc1=at_layer(pts, CENTROID_ACCURACY, 1),
    ),
)
CLAIMS = [
    *(
        spec
        for l in LAYERS
        for spec in (BALANCE[l], *(BALANCE_AT[c, l] for c in BASE.cuts[1:]), REACTION[l])
    ),
    *RAYS_2D.values(),
    *RAYS_FULL.values(),
    CLUSTER,
]


PRESETS: dict[str, dict[str, Any]] = {
    # Seconds: 5 digits per class, narrow, short GD.
    "smoke": {
        "task.per_class": 5,
        "model.width": 10,
        "train.phases": ({"optimizer": "sgd", "steps": 100, "lr": 0.05, "backtrack": True},),
        "train.log_every": 50,
    },
    # The spec's sizes and lam; Adam 2k + L-BFGS (float64) instead of the spec's GD (lr
    # 0.05, 20k steps: still falling at gradient norm 4e-3). L-BFGS 2500 balances the forces
    # better than 1500 (spec: 5k gives -0.995); a restart of 500, then Newton-KKT on the kink
    # manifold (`kink_newton` 120, which stops once converged, and a restart of 10 that
    # re-identifies the kink set: the last phase, whose start is the earlier state). The
    # L-BFGS end left the net moving along T_1 (lab notes `l2.md`, 2026-12-08).
    "quick": {
        "train.phases": (
            {"optimizer": "adam", "steps": 2000, "lr": 1e-3},
            {"optimizer": "lbfgs", "steps": 2500, "lr": 1.0},
            {"optimizer": "lbfgs", "steps": 500, "lr": 1.0},
            {"optimizer": "kink_newton", "steps": 120, "lr": 1.0},
            {"optimizer": "kink_newton", "steps": 10, "lr": 1.0},
        ),
        "train.log_every": 100,
    },
    # 004's sizes (MNIST would need the IDX files; the digits keep it offline) with longer GD.
    "paper": {
        "train.phases": ({"optimizer": "sgd", "steps": 100_000, "lr": 0.05, "backtrack": True},),
        # one long GD phase: its last quarter is the value-stability window
        "certify.earlier": 0.75,
    },
}

EXPERIMENT = Experiment[Config](
    name="l2/attraction-repulsion",
    source="004 Fig 1",
    title="Attraction and repulsion balance at a minimum; points cluster, neurons on few rays",
    config=BASE,
    presets=PRESETS,
    grid={},
    measure=FORCES,
    claims=CLAIMS,
    figures=("_l2:l2_forces",),
    doc=__doc__ or "",
)
