"""`leaky-resnet/coi-minima` — paper 000, §1.4, Props 1–2 (no training).

    bottlenecklab run leaky-resnet/coi-minima --preset quick

Prop 1: the bias-free cost of identity is at least the stable rank, on random matrices of
several kinds (`theory.coi_lower_bound_sweep`); for non-negative `A` the COI equals the rank. Prop
2: minimizing the relaxed COI at fixed Frobenius norm from Gaussian starts
(`theory.coi_minima`) ends at non-negative representations whose COIs (with and without
bias) are integers equal to their rank. Tables: `prop1`, `coi_minima`, `coi_history`.

Expected (quick preset): 5/5 claims pass (theory claims, no certificate); ~1-5 min wall.
Lab notes: `docs/lab-notes/leaky-resnet.md`, `docs/leaky-resnet-theory.md`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from bottlenecklab.experiments._claims import at_least, at_most
from bottlenecklab.experiments._spec import Claim, Experiment, Measurement, PointResult
from bottlenecklab.theory import (
    coi_lower_bound_sweep,
    coi_minima,
    cost_of_identity,
    minimize_cost_of_identity,
)

SOURCE = "000 §1.4"


@dataclass(frozen=True)
class Config:
    """Random matrices for Prop 1 and random starts for Prop 2.

    Args:
        n_matrices: random matrices per kind; max_n: largest sample count `N` (the width
            `w` is drawn in `[N, 2N]` so that the COI is generically finite).
        finite_tol: `coi_residual` below which the `gamma = 0` COI counts as finite.
        bound_tol: numerical slack of Prop 1 (`COI >= stable rank - bound_tol`).
        rank_rel: relative singular-value cut-off of the rank of the random matrices.
        nonneg_tol: accepted `|COI - rank|` for the non-negative random matrices.
        n_starts: random starts of the minimization; n, w: their shape `[N, w]`.
        steps, lr, gamma0: Adam steps, learning rate and relative ridge.
        rank_tol: accepted `|COI - rank|` (both COIs, at the end point).
        neg_tol: accepted negative mass `(||A||^2 - ||relu A||^2) / ||A||^2`.
    """

    n_matrices: int = 200
    max_n: int = 12
    finite_tol: float = 1e-8
    bound_tol: float = 1e-8
    rank_rel: float = 1e-8
    nonneg_tol: float = 1e-6
    n_starts: int = 20
    n: int = 12
    w: int = 16
    steps: int = 4000
    lr: float = 0.02
    gamma0: float = 1e-4
    rank_tol: float = 0.05
    neg_tol: float = 1e-6
    seed: int = 0


def measure(
    model: None,
    data: None,
    cfg: Config,
    *,
    coi: Callable[..., torch.Tensor] = cost_of_identity,
    minimize: Callable[..., tuple[torch.Tensor, list[float]]] = minimize_cost_of_identity,
) -> Measurement:
    """Prop 1 on random matrices (table `prop1`) and Prop 2 from random starts (tables
    `coi_minima`, `coi_history`). `coi` and `minimize` are the theory's; tests pass wrong
    ones to see the claims fail."""
    gen = torch.Generator().manual_seed(cfg.seed)
    prop1 = coi_lower_bound_sweep(
        cfg.n_matrices,
        cfg.max_n,
        gen,
        finite_tol=cfg.finite_tol,
        rank_rel=cfg.rank_rel,
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
        minimize=minimize,
        coi=coi,
    )
    finite = [r for r in prop1 if r["finite"]]
    scalars = {
        "prop1_total": float(len(prop1)),
        "prop1_finite": float(len(finite)),
        "prop1_min_gap": min((r["coi"] - r["stable_rank"] for r in finite), default=math.nan),
        "prop2_max_negative_mass": max((r["negative_mass"] for r in ends), default=math.nan),
        "prop2_max_rank_error": max((abs(r["coi"] - r["rank"]) for r in ends), default=math.nan),
        "prop2_mean_rank": sum(r["rank"] for r in ends) / max(1, len(ends)),
    }
    return Measurement(
        scalars=scalars, tables={"prop1": prop1, "coi_minima": ends, "coi_history": history}
    )


def claims(cfg: Config, results: list[PointResult]) -> list[Claim]:
    """Prop 1 bound, COI = rank for non-negative matrices, and Prop 2 at the end points,
    judged from the tables `prop1` and `coi_minima`."""
    t = results[0].tables
    prop1 = t.get("prop1", [])
    ends = t.get("coi_minima", [])
    finite = [r for r in prop1 if r["finite"]]
    nonneg = [r for r in finite if r["kind"] == "nonneg_low_rank"]

    def worst(values: list[float], pick: Callable[[list[float]], float]) -> float:
        # No rows (or a nan in them) is not a pass: nan fails every claim helper.
        vals = [float(v) for v in values]
        return pick(vals) if vals and all(math.isfinite(v) for v in vals) else math.nan

    counts: dict[int, int] = {}
    for r in ends:
        counts[int(r["rank"])] = counts.get(int(r["rank"]), 0) + 1
    ranks = ", ".join(f"rank {k}: {n}" for k, n in sorted(counts.items()))
    return [
        at_least(
            "prop1-bound",
            "000 Prop 1",
            "bias-free COI minus stable rank ||A||_*^2/||A||_F^2, smallest over "
            f"{len(finite)} random matrices with a finite COI (of {len(prop1)})",
            worst([r["coi"] - r["stable_rank"] for r in finite], min),
            0.0,
            tol=cfg.bound_tol,
        ),
        at_most(
            "nonneg-coi-is-rank",
            "000 §1.4",
            f"for non-negative A the bias-free COI equals rank A: largest |COI - rank| over "
            f"{len(nonneg)} matrices",
            worst([abs(r["coi"] - r["rank"]) for r in nonneg], max),
            cfg.nonneg_tol,
        ),
        at_most(
            "minima-non-negative",
            "000 Prop 2",
            f"COI minimized from {len(ends)} random starts ends at non-negative "
            "representations: largest negative mass",
            worst([r["negative_mass"] for r in ends], max),
            cfg.neg_tol,
        ),
        at_most(
            "minima-coi-is-rank",
            "000 Prop 2",
            f"at the end points the relaxed COI (gamma0 = {cfg.gamma0:g}) is within "
            f"{cfg.rank_tol:g} of the numerical rank ({ranks}): largest |COI - rank|",
            worst([abs(r["coi"] - r["rank"]) for r in ends], max),
            cfg.rank_tol,
        ),
        at_most(
            "minima-coi-bar-is-rank",
            "000 Prop 2",
            "and so is the bias-free COI: largest |COI-bar - rank|",
            worst([abs(r["coi_bar"] - r["rank"]) for r in ends], max),
            cfg.rank_tol,
        ),
    ]


PRESETS: dict[str, dict[str, Any]] = {
    # Seconds: a handful of matrices and two short minimizations.
    "smoke": {"n_matrices": 5, "n_starts": 2, "steps": 100, "n": 5, "w": 6},
    # Well under a minute on 2 cores: 8 starts.
    "quick": {"n_starts": 8, "steps": 3000},
    # The paper gives no sizes here; the base config (20 starts, 4000 steps).
    "paper": {},
}

EXPERIMENT = Experiment(
    name="leaky-resnet/coi-minima",
    source=SOURCE,
    title="COI >= stable rank (Prop 1); COI minima are non-negative with COI = rank (Prop 2)",
    config=Config(),
    presets=PRESETS,
    grid={},
    measure=measure,
    claims=claims,
    figures=("coi_minima",),
    trains=False,
    doc=__doc__ or "",
)
