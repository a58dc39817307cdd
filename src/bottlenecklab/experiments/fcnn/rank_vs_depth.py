"""`fcnn/rank-vs-depth` — paper 001, Fig 1.

    bottlenecklab run fcnn/rank-vs-depth --preset quick

ReLU nets (`beta = 1`, `lam = 0.001`) trained on the latent teacher (`k* = 2`) over a grid
of depths x seeds, every net from its own random init (no state crosses depths or seeds).
Expected: the middle weight rank (singular values of `W_ceil(L/2)` above 0.1) falls with
depth toward `k*`; within a rank group `||theta||^2 ~ k L + R1` (slope = rank); only the
middle grows with `L`; too deep nets stop fitting (train cost >= 0.1) only above every
depth where all seeds fit (asserted on the paper preset's full range; reported on the
quick grid, cut to the depths that certify). Quick preset: depths 4-12 x 3 seeds, Adam,
L-BFGS and a smoothed continuation in float64, minutes per net. Measurements and the
reasons behind the preset: `docs/lab-notes/fcnn.md`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from bottlenecklab.experiments._checks import at_least, at_most, listed, outcome, reported
from bottlenecklab.experiments._spec import (
    ClaimSpec,
    Experiment,
    Gate,
    Measure,
    Measurement,
    Outcome,
    PointResult,
    Points,
    Reads,
)
from bottlenecklab.experiments.fcnn._common import QUICK, SMOKE, LatentConfig
from bottlenecklab.measure import (
    DEPTH,
    K_STAR,
    MIDDLE_RANK,
    NORM_SQ,
    TEST_COST,
    TEST_ERROR,
    TRAIN_COST,
    costs,
    data_rank,
    rank_group_fits,
    weight_spectra,
)
from bottlenecklab.measure._layer_ranks import OFF_RANK_LAYERS, layer_ranks, rank_summary
from bottlenecklab.measure._rank_depth import (
    collapse_margin,
    largest_depth_share,
    rank_depth_correlation,
)


@dataclass(frozen=True)
class Config(LatentConfig):
    """Fig 1 at our paper-scale sizes (`LatentConfig`).

    Args:
        depths, seeds: the grid (depths `L`; data and init seeds).
        fit_threshold: a network fits when its final train cost is below this.
        spearman_max: bound on the Spearman correlation of middle rank with depth.
        slope_tolerance: relative tolerance of a rank group's slope against its rank.
        min_group_depths, min_group_span: a rank group is tested with at least this many
            distinct depths spanning at least this many layers.
        count_variation: bound on the spread of a tested group's off-rank layer count.
        assert_collapse: `collapse-above` asserted (True) or reported.
        certify: the convergence certificate of every claim.
    """

    depths: tuple[int, ...] = (3, 4, 5, 6, 8, 10, 12, 14, 16, 20, 24, 28, 32)
    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)
    fit_threshold: float = 0.1
    spearman_max: float = -0.6
    slope_tolerance: float = 0.25
    min_group_depths: int = 3
    min_group_span: float = 6.0
    count_variation: int = 2
    assert_collapse: bool = True
    certify: Gate = Gate(earlier=0.0)


BASE = Config()  # its tolerances are the claims' windows
RANK_STEP = 1.0  # the window of an integer scalar (a rank): it may not change at all
STRICT = 1e-9  # added to a bound that equality must not meet ("> 0", a majority "> 0.5")


def rank_measurement(model: torch.nn.Module, data, cfg: Config) -> Measurement:
    """`||theta||^2`, middle rank, per-layer ranks and spectra, costs."""
    scalars = {**rank_summary(model), K_STAR.name: data_rank(data), **costs(model, data)}
    ranks = layer_ranks(model)
    layers = [{"layer": float(l), "rank": float(r)} for l, r in enumerate(ranks, start=1)]
    return Measurement(scalars=scalars, layers=layers, spectra=weight_spectra(model))


RANKS = Measure(
    rank_measurement,
    (DEPTH, NORM_SQ, MIDDLE_RANK, OFF_RANK_LAYERS, K_STAR, TRAIN_COST, TEST_COST, TEST_ERROR),
)


def fits(cfg: Config, p: PointResult) -> bool:
    """Whether a finished network fits: train cost below `fit_threshold`."""
    return p.value(TRAIN_COST) < cfg.fit_threshold


def fitting(cfg: Config, pts: Points) -> list[PointResult]:
    """The finished networks that fit."""
    return [p for p in pts if fits(cfg, p)]


def judged(cfg: Config, pts: Points, result: Outcome, **facts) -> Outcome:
    """`result`, or with fewer than two fitting networks (nothing to compare) a failure
    with no value (`see spec`, nan)."""
    if len(fitting(cfg, pts)) < 2:
        return outcome("see spec", math.nan, False, **facts)
    return result.with_facts(**facts)


def rank_falls(cfg: Config, pts: Points) -> Outcome:
    """Spearman correlation of middle rank with depth over the fitting networks."""
    ok = fitting(cfg, pts)
    rho = rank_depth_correlation([p.value(DEPTH) for p in ok], [p.value(MIDDLE_RANK) for p in ok])
    return judged(cfg, pts, at_most(rho, cfg.spearman_max), n_fit=len(ok))


def k_star_reached(cfg: Config, pts: Points) -> Outcome:
    """The largest share, over depths, of seeds (every finished run of that depth) whose
    network fits with middle rank `k*`."""
    k = int(pts.last.value(K_STAR))
    hits = [fits(cfg, p) and int(p.value(MIDDLE_RANK)) == k for p in pts]
    share = largest_depth_share(pts.values(DEPTH), hits)
    return judged(cfg, pts, at_least(share, 0.5 + STRICT), k=k)


def groups(cfg: Config, pts: Points) -> list[dict[str, float]]:
    """The tested rank groups' line fits (`measure.rank_group_fits` of the fitting runs:
    enough depths over a long enough span)."""
    ok = fitting(cfg, pts)
    fits = rank_group_fits(
        [r.value(DEPTH) for r in ok],
        [r.value(NORM_SQ) for r in ok],
        [int(r.value(MIDDLE_RANK)) for r in ok],
        min_depths=cfg.min_group_depths,
        min_span=cfg.min_group_span,
    )
    return [g for g in fits if g["fitted"]]


def slope_is_rank(cfg: Config, pts: Points) -> Outcome:
    """`|slope - rank| / rank` of the worst tested group."""
    tested = groups(cfg, pts)
    errs = [abs(g["slope"] - g["rank"]) / g["rank"] for g in tested if g["rank"] > 0]
    worst = (max(errs) if errs else math.inf) if tested else math.nan
    text = "; ".join(
        f"rank {g['rank']:g}: slope {g['slope']:.3f}, intercept {g['intercept']:.2f}"
        for g in tested
    )
    return judged(cfg, pts, at_most(worst, cfg.slope_tolerance), groups=text or "no group")


def only_middle_grows(cfg: Config, pts: Points) -> Outcome:
    """The largest spread (max - min) over a tested group of its off-rank layer count."""
    tested, ok = groups(cfg, pts), fitting(cfg, pts)
    spread = []
    for g in tested:
        counts = [p.value(OFF_RANK_LAYERS) for p in ok if p.value(MIDDLE_RANK) == g["rank"]]
        spread.append(max(counts) - min(counts))
    text = ", ".join(f"rank {g['rank']:g}: {v:g}" for g, v in zip(tested, spread))
    worst = max(spread) if spread else math.nan
    return judged(cfg, pts, at_most(worst, cfg.count_variation), counts=text or "no group")


def collapse_above(cfg: Config, pts: Points) -> Outcome:
    """The smallest non-fitting depth minus the largest depth where every seed fits;
    reported on a grid cut to the depths that certify (`Config.assert_collapse`)."""
    collapse, top, margin = collapse_margin(pts.values(DEPTH), [fits(cfg, p) for p in pts])
    facts = {"collapse": collapse, "top": top, "cut": ""}
    if not cfg.assert_collapse:
        facts["cut"] = (
            f"; reported: the grid is cut to the depths that certify ({listed(cfg.depths, 'g')}"
            "; the paper preset asserts it)"
        )
        if len(fitting(cfg, pts)) < 2:
            return reported(math.nan, **facts)
        return reported(margin, **facts)
    return judged(cfg, pts, at_least(margin, STRICT), **facts)


RANK_FALLS = ClaimSpec(
    "rank-falls",
    "Spearman correlation of middle rank with depth over the {n_fit} fitting networks",
    Reads((MIDDLE_RANK,), window=RANK_STEP),
    rank_falls,
    partial=True,
)
K_STAR_REACHED = ClaimSpec(
    "k-star-reached",
    "largest share, over depths, of seeds whose network fits with middle rank k* = {k} "
    "(a majority: > 0.5)",
    Reads((MIDDLE_RANK,), window=RANK_STEP),
    k_star_reached,
    partial=True,
)
SLOPE_IS_RANK = ClaimSpec(
    "slope-is-rank",
    "each middle-rank group with >= {cfg.min_group_depths} depths spanning >= "
    "{cfg.min_group_span:g} layers: |slope - rank| / rank, worst group ({groups})",
    Reads(  # the slope window 2 x 0.25 k over >= 6 layers, in norm units
        (NORM_SQ,),
        window=2 * BASE.slope_tolerance * BASE.task.k_star * BASE.min_group_span,
    ),
    slope_is_rank,
    partial=True,
)
ONLY_MIDDLE_GROWS = ClaimSpec(
    "only-middle-grows",
    "in each tested group, the number of layers with r_l != rank varies by at most "
    "{cfg.count_variation} (max - min; {counts})",
    Reads((OFF_RANK_LAYERS,), window=BASE.count_variation),
    only_middle_grows,
    partial=True,
)
COLLAPSE_ABOVE = ClaimSpec(
    "collapse-above",
    "smallest depth of a non-fitting network ({collapse:g}) minus the largest depth "
    "where every seed fits ({top:g}); > 0 (inf: every network fits){cut}",
    Reads((TRAIN_COST,), window=BASE.fit_threshold),  # fits: train cost < 0.1
    collapse_above,
    partial=True,
)

PRESETS = {
    "smoke": {  # seconds: three shallow depths, two seeds
        **SMOKE,
        "depths": (3, 4, 6),
        "seeds": (0, 1),
        "train.checkpoint_every": 20,
    },
    # The certified recipe (_common), cut to the depths that certify (lab notes `fcnn.md`).
    "quick": {**QUICK, "depths": (4, 6, 8, 10, 12), "seeds": (0, 1, 2), "assert_collapse": False},
    "paper": {},  # our paper-scale choice (paper 001 gives no sizes): the base config
}

EXPERIMENT = Experiment[Config](
    name="fcnn/rank-vs-depth",
    source="001 Fig 1",
    title="||theta||^2 grows like (middle rank) x L; the middle rank falls to k* with depth",
    config=BASE,
    presets=PRESETS,
    grid={"model.depth": "depths", "seed": "seeds"},
    measure=RANKS,
    claims=[RANK_FALLS, K_STAR_REACHED, SLOPE_IS_RANK, ONLY_MIDDLE_GROWS, COLLAPSE_ABOVE],
    figures=("_depth_rank:rank_vs_depth", "_depth_rank:depth_spectra"),
    doc=__doc__ or "",
)

__all__ = ["EXPERIMENT", "Config"]
