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

from bottlenecklab.experiments._checks import at_least, at_most
from bottlenecklab.experiments._spec import ClaimSpec, Experiment, Points, Ungated
from bottlenecklab.experiments.leaky_resnet._coi import COI_MINIMA, GAMMA0, PROP1_RANK_RULE


@dataclass(frozen=True)
class Config:
    """Random matrices for Prop 1 and random starts for Prop 2.

    Args:
        n_matrices: random matrices per kind; max_n: largest sample count `N`.
        finite_tol: `coi_residual` below which the `gamma = 0` COI counts as finite.
        bound_tol: numerical slack of Prop 1 (`COI >= stable rank - bound_tol`).
        rank_rel: the cutoff of the random matrices' rank rule (`PROP1_RANK_RULE`).
        nonneg_tol: accepted `|COI - rank|` for the non-negative random matrices.
        n_starts: random starts of the minimization; n, w: their shape `[N, w]`.
        steps, lr, gamma0: Adam steps, learning rate and relative ridge (the end points'
            rank rule, `minima_rank_rule(gamma0)`).
        rank_tol: accepted `|COI - rank|` (both COIs, at the end point).
        neg_tol: accepted negative mass `(||A||^2 - ||relu A||^2) / ||A||^2`.
    """

    n_matrices: int = 200
    max_n: int = 12
    finite_tol: float = 1e-8
    bound_tol: float = 1e-8
    rank_rel: float = PROP1_RANK_RULE.cutoff
    nonneg_tol: float = 1e-6
    n_starts: int = 20
    n: int = 12
    w: int = 16
    steps: int = 4000
    lr: float = 0.02
    gamma0: float = GAMMA0
    rank_tol: float = 0.05
    neg_tol: float = 1e-6
    seed: int = 0


def _worst(values: list[float], pick: Callable[[list[float]], float]) -> float:
    """`pick` of `values`; no rows (or a nan in them) is not a pass: nan fails every check."""
    vals = [float(v) for v in values]
    return pick(vals) if vals and all(math.isfinite(v) for v in vals) else math.nan


def _rows(pts: Points, table: str, kind: str | None = None) -> list[dict[str, Any]]:
    """Rows of `table` (`prop1` rows: only those with a finite COI, of `kind` if given)."""
    rows = pts.last.tables.get(table, [])
    if table == "prop1":
        rows = [r for r in rows if r["finite"] and kind in (None, r["kind"])]
    return rows


def prop1_bound(cfg: Config, pts: Points):
    """The smallest `COI - stable rank` over the matrices with a finite COI."""
    finite = _rows(pts, "prop1")
    gap = _worst([r["coi"] - r["stable_rank"] for r in finite], min)
    total = len(pts.last.tables.get("prop1", []))
    return at_least(gap, 0.0, tol=cfg.bound_tol, finite=len(finite), total=total)


def nonneg(cfg: Config, pts: Points):
    """The largest `|COI - rank|` over the non-negative matrices."""
    rows = _rows(pts, "prop1", "nonneg_low_rank")
    return at_most(
        _worst([abs(r["coi"] - r["rank"]) for r in rows], max), cfg.nonneg_tol, n=len(rows)
    )


def at_ends(value: Callable[[dict[str, Any]], float], tol: str):
    """The largest `value(row)` over the minimization ends, at most `cfg.<tol>`."""

    def check(cfg: Config, pts: Points):
        ends = _rows(pts, "coi_minima")
        counts: dict[int, int] = {}
        for r in ends:
            counts[int(r["rank"])] = counts.get(int(r["rank"]), 0) + 1
        ranks = ", ".join(f"rank {k}: {n}" for k, n in sorted(counts.items()))
        worst = _worst([value(r) for r in ends], max)
        return at_most(worst, getattr(cfg, tol), starts=len(ends), ranks=ranks)

    return check


THEORY = Ungated("a computation on random matrices (no trained network to certify)")
PROP1_BOUND = ClaimSpec(
    "prop1-bound",
    "bias-free COI minus stable rank ||A||_*^2/||A||_F^2, smallest over {finite} random "
    "matrices with a finite COI (of {total})",
    THEORY,
    prop1_bound,
    source="000 Prop 1",
)
NONNEG_COI_IS_RANK = ClaimSpec(
    "nonneg-coi-is-rank",
    "for non-negative A the bias-free COI equals rank A: largest |COI - rank| over {n} matrices",
    THEORY,
    nonneg,
)
MINIMA_NON_NEGATIVE = ClaimSpec(
    "minima-non-negative",
    "COI minimized from {starts} random starts ends at non-negative representations: "
    "largest negative mass",
    THEORY,
    at_ends(lambda r: r["negative_mass"], "neg_tol"),
    source="000 Prop 2",
)
MINIMA_COI_IS_RANK = ClaimSpec(
    "minima-coi-is-rank",
    "at the end points the relaxed COI (gamma0 = {cfg.gamma0:g}) is within "
    "{cfg.rank_tol:g} of the numerical rank ({ranks}): largest |COI - rank|",
    THEORY,
    at_ends(lambda r: abs(r["coi"] - r["rank"]), "rank_tol"),
    source="000 Prop 2",
)
MINIMA_COI_BAR_IS_RANK = ClaimSpec(
    "minima-coi-bar-is-rank",
    "and so is the bias-free COI: largest |COI-bar - rank|",
    THEORY,
    at_ends(lambda r: abs(r["coi_bar"] - r["rank"]), "rank_tol"),
    source="000 Prop 2",
)
CLAIMS = [
    PROP1_BOUND,
    NONNEG_COI_IS_RANK,
    MINIMA_NON_NEGATIVE,
    MINIMA_COI_IS_RANK,
    MINIMA_COI_BAR_IS_RANK,
]


PRESETS: dict[str, dict[str, Any]] = {
    # Seconds: a handful of matrices and two short minimizations.
    "smoke": {"n_matrices": 5, "n_starts": 2, "steps": 100, "n": 5, "w": 6},
    # Well under a minute on 2 cores: 8 starts.
    "quick": {"n_starts": 8, "steps": 3000},
    # The paper gives no sizes here; the base config (20 starts, 4000 steps).
    "paper": {},
}

EXPERIMENT = Experiment[Config](
    name="leaky-resnet/coi-minima",
    source="000 §1.4",
    title="COI >= stable rank (Prop 1); COI minima are non-negative with COI = rank (Prop 2)",
    config=Config(),
    presets=PRESETS,
    grid={},
    measure=COI_MINIMA,
    claims=CLAIMS,
    figures=("_leaky_resnet_theory:coi_minima",),
    trains=False,
    doc=__doc__ or "",
)
