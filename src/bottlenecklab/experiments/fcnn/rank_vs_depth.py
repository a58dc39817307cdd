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
from typing import Any

import torch

from bottlenecklab.experiments._claims import at_least, at_most, reported, unmeasured
from bottlenecklab.experiments._spec import (
    Claim,
    Experiment,
    Gate,
    Measurement,
    PointResult,
    Reads,
)
from bottlenecklab.measure import (
    costs,
    layer_ranks,
    middle_rank,
    rank_depth_correlation,
    rank_group_fits,
    weight_spectra,
)
from bottlenecklab.models import FCNNConfig
from bottlenecklab.tasks import LatentTeacherConfig
from bottlenecklab.training import PhaseConfig, TrainConfig

SOURCE = "001 Fig 1"


@dataclass(frozen=True)
class Config:
    """Fig 1 (paper 001, App. E gives no sizes; these are ours, spec `depth-and-rank.md`).

    Args:
        depths: the depths `L` of the grid; seeds: the seeds of the grid (data and init).
        fit_threshold: a network fits when its final train cost is below this.
        spearman_max: the Spearman correlation of middle rank with depth (fitting runs)
            must be at most this.
        slope_tolerance: relative tolerance of a rank group's slope against its rank.
        min_group_depths, min_group_span: a rank group is tested when it has at least
            this many distinct depths spanning at least this many layers.
        count_variation: in a tested group, the number of layers with `r_l != rank` may
            vary by at most this (only the middle grows, Fig 1b).
        assert_collapse: `collapse-above` asserted (a grid that reaches the depths where
            training fails); False: reported, for a grid cut to the depths that certify,
            where every net fits and the claim could not fail.
        certify: the convergence certificate of every claim (spec `convergence.md`):
            threshold 1e-2 (the spec's default); the earlier state of value stability is
            the start of the last phase, a short L-BFGS extension (it may stop early).
    """

    task: LatentTeacherConfig = LatentTeacherConfig(n_train=1000, n_test=1000)
    model: FCNNConfig = FCNNConfig(depth=8, width=100, bias_scale=1.0)
    train: TrainConfig = TrainConfig(
        lam=0.001,
        lr_per_depth=True,
        phases=(
            PhaseConfig("adam", 20_000, 0.01, "cosine"),
            PhaseConfig("sgd", 5000, 0.1, backtrack=True),
        ),
        log_every=500,
        checkpoint_every=5000,
    )
    seed: int = 0
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


def measure(model: torch.nn.Module, data, cfg: Config) -> Measurement:
    """`||theta||^2`, middle rank, per-layer ranks and spectra, costs."""
    ranks = layer_ranks(model)
    mid = middle_rank(model)
    scalars = {
        "depth": float(model.depth),
        "norm_sq": float(model.param_norm_sq().detach().double()),
        "middle_rank": float(mid),
        "off_rank_layers": float(sum(r != mid for r in ranks)),
        "k_star": float(data.k_star),
        **costs(model, data),
    }
    layers = [{"layer": float(l), "rank": float(r)} for l, r in enumerate(ranks, start=1)]
    return Measurement(scalars=scalars, layers=layers, spectra=weight_spectra(model))


CLAIMS = (
    ("rank-falls", "middle rank falls with depth"),
    ("k-star-reached", "a majority of seeds reaches k* at some depth"),
    ("slope-is-rank", "||theta||^2-vs-L slope of each rank group is its rank"),
    ("only-middle-grows", "the number of off-rank layers is constant in a group"),
    ("collapse-above", "networks stop fitting only above every all-fit depth"),
)


def fits(cfg: Config, results: list[PointResult]) -> list[dict[str, float]]:
    """Rank-group line fits of the fitting runs (`measure.rank_group_fits`)."""
    ok = [r for r in results if r.status == "done" and r.scalars["train_cost"] < cfg.fit_threshold]
    return rank_group_fits(
        [r.scalars["depth"] for r in ok],
        [r.scalars["norm_sq"] for r in ok],
        [int(r.scalars["middle_rank"]) for r in ok],
        min_depths=cfg.min_group_depths,
        min_span=cfg.min_group_span,
    )


def claims(cfg: Config, results: list[PointResult]) -> list[Claim]:
    """The claims of Fig 1 (spec `depth-and-rank.md`, experiments table)."""
    done = [r for r in results if r.status == "done"]
    fitting = [r for r in done if r.scalars["train_cost"] < cfg.fit_threshold]
    if len(fitting) < 2:  # measured, and nothing to compare: every claim fails
        why = f"{len(fitting)} of {len(results)} networks fit (train cost < {cfg.fit_threshold})"
        if not done:
            return [unmeasured(cid, SOURCE, st, "see spec", why) for cid, st in CLAIMS]
        return [
            Claim(cid, SOURCE, f"{st} ({why})", "see spec", math.nan, False)
            if cid != "collapse-above" or cfg.assert_collapse
            else reported(cid, SOURCE, f"{st} ({why}; reported on a cut grid)", math.nan)
            for cid, st in CLAIMS
        ]
    k = int(fitting[0].scalars["k_star"])
    depth = [r.scalars["depth"] for r in fitting]
    mid = [r.scalars["middle_rank"] for r in fitting]
    rho = rank_depth_correlation(depth, mid)
    # majority of seeds at k* at some depth (all runs of that depth count as seeds)
    share = 0.0
    for L in sorted({r.scalars["depth"] for r in done}):
        at = [r for r in done if r.scalars["depth"] == L]
        hit = [r for r in at if r in fitting and int(r.scalars["middle_rank"]) == k]
        share = max(share, len(hit) / len(at))
    groups = [g for g in fits(cfg, results) if g["fitted"]]
    worst_slope, worst_count = float("nan"), float("nan")
    slope_text, count_text = "no group", "no group"
    if groups:
        errs = [abs(g["slope"] - g["rank"]) / g["rank"] for g in groups if g["rank"] > 0]
        worst_slope = max(errs) if errs else float("inf")
        slope_text = "; ".join(
            f"rank {g['rank']:g}: slope {g['slope']:.3f}, intercept {g['intercept']:.2f}"
            for g in groups
        )
        variation = []
        for g in groups:
            counts = [
                r.scalars["off_rank_layers"]
                for r in fitting
                if r.scalars["middle_rank"] == g["rank"]
            ]
            variation.append(max(counts) - min(counts))
        worst_count = max(variation)
        count_text = ", ".join(f"rank {g['rank']:g}: {v:g}" for g, v in zip(groups, variation))
    all_fit = [
        L
        for L in {r.scalars["depth"] for r in done}
        if all(r.scalars["train_cost"] < cfg.fit_threshold for r in done if r.scalars["depth"] == L)
    ]
    misfits = [r.scalars["depth"] for r in done if r not in fitting]
    top_all_fit = max(all_fit) if all_fit else float("nan")
    collapse = min(misfits) if misfits else float("inf")
    margin = collapse - top_all_fit if all_fit else float("nan")
    slope_claim = at_most(
        "slope-is-rank",
        SOURCE,
        "each middle-rank group with >= "
        f"{cfg.min_group_depths} depths spanning >= {cfg.min_group_span:g} layers: "
        f"|slope - rank| / rank, worst group ({slope_text})",
        worst_slope,
        cfg.slope_tolerance,
    )
    count_claim = at_most(
        "only-middle-grows",
        SOURCE,
        "in each tested group, the number of layers with r_l != rank varies by at most "
        f"{cfg.count_variation} (max - min; {count_text})",
        worst_count,
        cfg.count_variation,
    )
    return [
        at_most(
            "rank-falls",
            SOURCE,
            f"Spearman correlation of middle rank with depth over the {len(fitting)} fitting "
            "networks",
            rho,
            cfg.spearman_max,
        ),
        at_least(
            "k-star-reached",
            SOURCE,
            f"largest share, over depths, of seeds whose network fits with middle rank "
            f"k* = {k} (a majority: > 0.5)",
            share,
            0.5 + 1e-9,
        ),
        slope_claim,
        count_claim,
        collapse_claim(cfg, margin, collapse, top_all_fit),
    ]


def collapse_claim(cfg: Config, margin: float, collapse: float, top_all_fit: float) -> Claim:
    """`collapse-above`: asserted on a grid that reaches the depths where training fails,
    reported on a grid cut to the depths that certify (`Config.assert_collapse`)."""
    statement = (
        f"smallest depth of a non-fitting network ({collapse:g}) minus the largest depth "
        f"where every seed fits ({top_all_fit:g}); > 0 (inf: every network fits)"
    )
    if not cfg.assert_collapse:
        return reported(
            "collapse-above",
            SOURCE,
            f"{statement}; reported: the grid is cut to the depths that certify "
            f"({', '.join(f'{L:g}' for L in cfg.depths)}; the paper preset asserts it)",
            margin,
        )
    return at_least("collapse-above", SOURCE, statement, margin, 1e-9)


# The smoothed continuation after L-BFGS: three L-BFGS runs of 200 at each sharpness
# beta, then trust region, longer at the smaller beta (its inner problem is better
# conditioned there); lab notes `fcnn.md`, 2026-11-28.
SMOOTHED_STAGES: tuple[dict[str, Any], ...] = tuple(
    {"optimizer": "lbfgs", "steps": 200, "lr": 1.0, "smooth": beta}
    for beta in (1e2, 1e3, 1e4, 1e5, 1e6, 1e7)
    for _ in range(3)
) + tuple(
    {"optimizer": "trust_region", "steps": steps, "lr": 1.0, "smooth": beta}
    for beta, steps in ((1e4, 200), (1e5, 200), (1e6, 100), (1e7, 100))
)

# The quick grid: the depths that certify (lab notes `fcnn.md`, 2026-11-28).
QUICK_DEPTHS: tuple[int, ...] = (4, 6, 8, 10, 12)

# Presets: only what changes, with the reason.
PRESETS = {
    # Seconds: a tiny teacher sample and three shallow depths, a few steps.
    "smoke": {
        "task.n_train": 32,
        "task.n_test": 16,
        "model.width": 12,
        "depths": (3, 4, 6),
        "seeds": (0, 1),
        "train.phases": (
            {"optimizer": "adam", "steps": 30, "lr": 0.01, "schedule": "cosine"},
            {"optimizer": "sgd", "steps": 10, "lr": 0.1, "backtrack": True},
        ),
        "train.log_every": 10,
        "train.checkpoint_every": 20,
    },
    # Minutes per net on one core (measured numbers and the reasons in
    # docs/lab-notes/fcnn.md). From the spec's starting point (N = 256, width 48, 3 seeds,
    # He init, Adam 4000 + 1000 GD), changed: He init x 0.7; float64; Adam, then L-BFGS
    # (Adam and GD leave the unused singular values almost untouched), then the smoothed
    # continuation (L-BFGS and trust region on softplus-smoothed ReLUs, sharpness beta),
    # which walks on past the kinks where exact L-BFGS stops; N = 128, width 32. Every
    # net starts from its own random init. The grid is cut to the depths that certify on
    # a 2-core budget (spec, fourth review): `collapse-above` is reported; the full range
    # stays in the paper preset.
    "quick": {
        "task.n_train": 128,
        "task.n_test": 128,
        "model.width": 32,
        "model.init_scale": 0.7,
        "depths": QUICK_DEPTHS,
        "seeds": (0, 1, 2),
        "assert_collapse": False,
        "train.dtype": "float64",
        "train.lr_per_depth": False,
        "train.phases": (
            {"optimizer": "adam", "steps": 1500, "lr": 1e-3, "schedule": "cosine"},
            {"optimizer": "lbfgs", "steps": 400, "lr": 1.0},
            *SMOOTHED_STAGES,
            # exact; also the certificate's extension: value stability compares its start
            # and end (`certify.earlier = 0`)
            {"optimizer": "lbfgs", "steps": 100, "lr": 1.0},
        ),
        "train.log_every": 100,
        # the kink band must hold the last smoothing's band (|z| < 4.6 / beta at 1e7)
        "certify.tau": 1e-5,
    },
    # Our paper-scale choice (paper 001 gives no sizes): the base config.
    "paper": {},
}

EXPERIMENT = Experiment(
    name="fcnn/rank-vs-depth",
    source=SOURCE,
    title="||theta||^2 grows like (middle rank) x L; the middle rank falls to k* with depth",
    config=Config(),
    presets=PRESETS,
    grid={"model.depth": "depths", "seed": "seeds"},
    measure=measure,
    claims=claims,
    figures=("rank_vs_depth", "depth_spectra"),
    doc=__doc__ or "",
    # What each claim reads (every point), with the width of its tolerance window.
    reads={
        "rank-falls": Reads(("middle_rank",), window=1.0),  # an integer: no change
        "k-star-reached": Reads(("middle_rank",), window=1.0),
        # slope within +-25 % of the rank (a window of 0.5 k in slope units) over >= 6
        # layers: a norm change of 0.5 k * 6 / 4 >= 1.5 moves a slope by window / 4
        "slope-is-rank": Reads(("norm_sq",), window=6.0),
        "only-middle-grows": Reads(("off_rank_layers",), window=2.0),  # +-2: no change
        "collapse-above": Reads(("train_cost",), window=0.1),  # fits: train cost < 0.1
    },
)

__all__ = ["EXPERIMENT", "Config", "fits"]
