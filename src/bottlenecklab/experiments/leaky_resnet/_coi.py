"""The measurement of `leaky-resnet/coi-minima` (paper 000, §1.4, Props 1-2; no training),
the quantities it writes, declared once (only that experiment reads them, so they live
with the area, not on the `measure` face), and its two rank rules.

`COI_MINIMA` runs Prop 1 on random matrices (table `prop1`, ranks by `prop1_rank_rule`,
`PROP1_RANK_RULE` by default) and Prop 2 from random starts (tables `coi_minima`,
`coi_history`, ranks by `minima_rank_rule(gamma0)`), summarized in `PROP1_*` and
`PROP2_*`. `coi_measurement` takes the theory's maps as keywords (`coi`, `minimize`):
tests pass wrong ones to see the claims fail.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from bottlenecklab.experiments._spec import Measure, Measurement
from bottlenecklab.measure import Quantity, RankRule
from bottlenecklab.theory import (
    coi_lower_bound_sweep,
    coi_minima,
    coi_minima_summary,
    cost_of_identity,
    minimize_cost_of_identity,
)

__all__ = [
    "COI_MINIMA",
    "GAMMA0",
    "PROP1_FINITE",
    "PROP1_MIN_GAP",
    "PROP1_RANK_RULE",
    "PROP1_TOTAL",
    "PROP2_MAX_NEGATIVE_MASS",
    "PROP2_MAX_RANK_ERROR",
    "PROP2_MEAN_RANK",
    "coi_measurement",
    "minima_rank_rule",
    "prop1_rank_rule",
]

# The rank rules of coi-minima (spec README, "Rank rules").
# Prop 1's random matrices are planted (low-rank products of known inner width): their rank
# is counted at a fixed relative 1e-8, far above float64 round-off, far below any planted
# singular value.
PROP1_RANK_RULE = RankRule.relative(1e-8)


def prop1_rank_rule(rel: float = PROP1_RANK_RULE.cutoff) -> RankRule:
    """`PROP1_RANK_RULE` at the cutoff `rel` a config states (`coi-minima`'s `rank_rel`)."""
    return RankRule.relative(rel)


GAMMA0 = 1e-4  # the relative ridge of the relaxed COI (`coi-minima`'s default gamma0)


def minima_rank_rule(gamma0: float = GAMMA0) -> RankRule:
    """The rank of Prop 2's end points: the singular values the ridge
    `gamma = gamma0 ||K||_op = gamma0 s_1^2` resolves, `s_i > sqrt(gamma0) s_1`."""
    return RankRule.paper(
        math.sqrt(gamma0), "paper 000, §1.4: the ridge gamma0 ||K||_op of the relaxed COI"
    )


def coi_measurement(
    model: None,
    data: None,
    cfg: Any,
    *,
    coi: Callable[..., torch.Tensor] = cost_of_identity,
    minimize: Callable[..., tuple[torch.Tensor, list[float]]] = minimize_cost_of_identity,
) -> Measurement:
    """Prop 1 on random matrices (table `prop1`, ranks by `prop1_rank_rule`) and Prop 2
    from random starts (tables `coi_minima`, `coi_history`, ranks by `minima_rank_rule`).

    Args:
        model, data: None (nothing is trained); cfg: `coi-minima`'s `Config`.
        coi, minimize: the theory's (tests pass wrong ones).
    """
    gen = torch.Generator().manual_seed(cfg.seed)
    prop1 = coi_lower_bound_sweep(
        cfg.n_matrices,
        cfg.max_n,
        gen,
        finite_tol=cfg.finite_tol,
        rank_rel=prop1_rank_rule(cfg.rank_rel).cutoff,
        coi=coi,
    )
    ends, history = coi_minima(
        cfg.n_starts,
        cfg.n,
        cfg.w,
        gen,
        gamma0=cfg.gamma0,
        steps=cfg.steps,
        lr=cfg.lr,
        rank_rel=minima_rank_rule(cfg.gamma0).cutoff,
        minimize=minimize,
        coi=coi,
    )
    scalars = coi_minima_summary(prop1, ends)
    return Measurement(
        scalars=scalars, tables={"prop1": prop1, "coi_minima": ends, "coi_history": history}
    )


_PROP1 = "the random matrices of Prop 1 (table prop1; no network)"
_PROP2 = "the end points of the relaxed-COI minimization (table coi_minima; no network)"


def _coi(name: str, doc: str, over: str, units: str, **kw: Any) -> Quantity:
    return Quantity(name, doc, function=coi_minima_summary, over=over, units=units, **kw)


PROP1_TOTAL = _coi("prop1_total", "random matrices drawn for Prop 1", _PROP1, "count")
PROP1_FINITE = _coi("prop1_finite", "of them, those whose bias-free COI is finite", _PROP1, "count")
PROP1_MIN_GAP = _coi(
    "prop1_min_gap",
    "smallest bias-free COI minus stable rank over the finite ones (paper 000, Prop 1: >= 0)",
    _PROP1,
    "rank units",
)
PROP2_MAX_NEGATIVE_MASS = _coi(
    "prop2_max_negative_mass",
    "largest negative mass (||A||^2 - ||relu A||^2) / ||A||^2 at the ends (paper 000, Prop 2)",
    _PROP2,
    "relative",
)
PROP2_MAX_RANK_ERROR = _coi(
    "prop2_max_rank_error",
    "largest |COI - rank| at the ends, rank by minima_rank_rule (paper 000, Prop 2)",
    _PROP2,
    "rank units",
)
PROP2_MEAN_RANK = _coi(
    "prop2_mean_rank",
    "mean numerical rank of the end points",
    _PROP2,
    "rank",
    rule=minima_rank_rule(),
)
COI_MINIMA = Measure(
    coi_measurement,
    (
        PROP1_TOTAL,
        PROP1_FINITE,
        PROP1_MIN_GAP,
        PROP2_MAX_NEGATIVE_MASS,
        PROP2_MAX_RANK_ERROR,
        PROP2_MEAN_RANK,
    ),
)
