"""`leaky-resnet/coi-minima` — paper 000, §1.4, Props 1–2 (no training).

    bottlenecklab run leaky-resnet/coi-minima --preset quick

Prop 1: the bias-free cost of identity `||A||^2_{K-bar}` is at least the stable rank
`||A||_*^2 / ||A||_F^2`; checked on random matrices of several kinds (Gaussian, sparse,
low rank, non-negative low rank), where the COI is finite (the columns of `A` lie in the
range of `relu(A)`; others are counted and skipped: there the COI is infinite and the bound
trivial). For non-negative `A` the COI equals the rank (§1.4).

Prop 2: stable local minima of the COI with bias are non-negative with
`COI = COI-bar = rank`. The relaxed COI (`gamma = gamma0 ||K||_op`) is minimized with Adam
from Gaussian starts at a fixed Frobenius norm (without it the ridge makes zero the only
minimum); the end points should be non-negative, with both COIs within a tolerance of an
integer equal to the numerical rank (singular values above `sqrt(gamma0) s_1`, the scale
the ridge resolves).

Expected (quick preset): 5/5 claims pass in about 20 s — Prop 1 holds on all 633 random
matrices with a finite COI (equality for rank one), COI = rank for non-negative matrices
(error 1e-10), the 8 minimizations end non-negative (negative mass 1e-7) at ranks 4-6 with
|COI - rank| <= 0.006.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from bottlenecklab.experiments._claims import at_least, at_most
from bottlenecklab.experiments._spec import Claim, Experiment, Measurement, PointResult
from bottlenecklab.measure import coi_residual, negative_mass
from bottlenecklab.theory import (
    cost_of_identity,
    minimize_cost_of_identity,
    relative_gamma,
    stable_rank,
)

SOURCE = "000 §1.4"
KINDS = ("gaussian", "sparse", "low_rank", "nonneg_low_rank")


@dataclass(frozen=True)
class Config:
    """Random matrices for Prop 1 and random starts for Prop 2.

    Args:
        n_matrices: random matrices per kind; max_n: largest sample count `N` (the width
            `w` is drawn in `[N, 2N]` so that the COI is generically finite).
        finite_tol: `coi_residual` below which the `gamma = 0` COI counts as finite.
        bound_tol: numerical slack of Prop 1 (`COI >= stable rank - bound_tol`).
        n_starts: random starts of the minimization; n, w: their shape `[N, w]`.
        steps, lr, gamma0: Adam steps, learning rate and relative ridge.
        rank_tol: accepted `|COI - rank|` (both COIs, at the end point).
        neg_tol: accepted negative mass `(||A||^2 - ||relu A||^2) / ||A||^2`.
    """

    n_matrices: int = 200
    max_n: int = 12
    finite_tol: float = 1e-8
    bound_tol: float = 1e-8
    n_starts: int = 20
    n: int = 12
    w: int = 16
    steps: int = 4000
    lr: float = 0.02
    gamma0: float = 1e-4
    rank_tol: float = 0.05
    neg_tol: float = 1e-6
    seed: int = 0


def _random_matrix(kind: str, gen: torch.Generator, max_n: int) -> torch.Tensor:
    """One random `[N, w]` matrix of the given kind, `N <= w <= 2N`."""
    N = int(torch.randint(2, max_n + 1, (1,), generator=gen))
    w = int(torch.randint(N, 2 * N + 1, (1,), generator=gen))
    g = torch.randn(N, w, generator=gen, dtype=torch.float64)
    if kind == "sparse":
        return g * (torch.rand(N, w, generator=gen, dtype=torch.float64) < 0.3)
    if kind in ("low_rank", "nonneg_low_rank"):
        k = int(torch.randint(1, N + 1, (1,), generator=gen))
        U = torch.randn(N, k, generator=gen, dtype=torch.float64)
        V = torch.randn(k, w, generator=gen, dtype=torch.float64)
        return U.abs() @ V.abs() if kind == "nonneg_low_rank" else U @ V
    return g


def _numerical_rank(A: torch.Tensor, rel: float) -> int:
    s = torch.linalg.svdvals(A)
    return int((s > rel * s[0]).sum())


def measure(model: None, data: None, cfg: Config) -> Measurement:
    """Prop 1 on random matrices (`spectra` rows tagged `matrix="prop1"`: COI vs bound) and
    Prop 2 from random starts (`layers` rows: COI history per start)."""
    gen = torch.Generator().manual_seed(cfg.seed)
    scalars: dict[str, float] = {}
    points: list[dict[str, float | str]] = []
    gaps, finite, rank_err = [], 0, 0.0
    for kind_i, kind in enumerate(KINDS):
        for i in range(cfg.n_matrices):
            A = _random_matrix(kind, gen, cfg.max_n)
            if coi_residual(A, bias=False) > cfg.finite_tol:
                continue
            finite += 1
            coi = float(cost_of_identity(A, bias=False))
            bound = float(stable_rank(A))
            gaps.append(coi - bound)
            if kind == "nonneg_low_rank":
                rank_err = max(rank_err, abs(coi - torch.linalg.matrix_rank(A).item()))
            points.append(
                {"matrix": "prop1", "layer": kind_i, "index": i, "value": coi, "bound": bound}
            )
    scalars["prop1_min_gap"] = min(gaps) if gaps else math.nan
    scalars["prop1_finite"] = float(finite)
    scalars["prop1_total"] = float(cfg.n_matrices * len(KINDS))
    scalars["nonneg_rank_error"] = rank_err

    rows: list[dict[str, float]] = []
    finals = []
    rel = math.sqrt(cfg.gamma0)
    every = max(1, cfg.steps // 100)
    for s in range(cfg.n_starts):
        A0 = torch.randn(cfg.n, cfg.w, generator=gen, dtype=torch.float64)
        A, hist = minimize_cost_of_identity(A0, gamma0=cfg.gamma0, steps=cfg.steps, lr=cfg.lr)
        rank = _numerical_rank(A, rel)
        coi = float(cost_of_identity(A, gamma=relative_gamma(A, cfg.gamma0)))
        coi_bar = float(
            cost_of_identity(A, gamma=relative_gamma(A, cfg.gamma0, bias=False), bias=False)
        )
        finals.append((negative_mass(A), abs(coi - rank), abs(coi_bar - rank), rank))
        rows.extend(
            {"start": float(s), "step": float(t + 1), "coi": v}
            for t, v in enumerate(hist)
            if t % every == 0 or t == len(hist) - 1
        )
        rows.append({"start": float(s), "step": -1.0, "coi": coi, "rank": float(rank)})
    scalars["prop2_max_negative_mass"] = max(f[0] for f in finals)
    scalars["prop2_max_rank_error"] = max(f[1] for f in finals)
    scalars["prop2_max_rank_error_nobias"] = max(f[2] for f in finals)
    scalars["prop2_ranks"] = float(sum(f[3] for f in finals) / len(finals))
    for r in sorted({f[3] for f in finals}):
        scalars[f"prop2_count_rank_{r}"] = float(sum(f[3] == r for f in finals))
    return Measurement(scalars=scalars, layers=rows, spectra=points)


def claims(cfg: Config, results: list[PointResult]) -> list[Claim]:
    """Prop 1 bound, COI = rank for non-negative matrices, and Prop 2 at the end points."""
    s = results[0].scalars
    ranks = ", ".join(
        f"rank {k.rsplit('_', 1)[1]}: {int(v)}"
        for k, v in s.items()
        if k.startswith("prop2_count_rank_")
    )
    return [
        at_least(
            "prop1-bound",
            "000 Prop 1",
            "bias-free COI minus stable rank ||A||_*^2/||A||_F^2, smallest over "
            f"{int(s['prop1_finite'])} random matrices with a finite COI (of "
            f"{int(s['prop1_total'])})",
            s["prop1_min_gap"],
            0.0,
            tol=cfg.bound_tol,
        ),
        at_most(
            "nonneg-coi-is-rank",
            "000 §1.4",
            "for non-negative A the bias-free COI equals rank A: largest |COI - rank|",
            s["nonneg_rank_error"],
            1e-6,
        ),
        at_most(
            "minima-non-negative",
            "000 Prop 2",
            f"COI minimized from {cfg.n_starts} random starts ends at non-negative "
            "representations: largest negative mass",
            s["prop2_max_negative_mass"],
            cfg.neg_tol,
        ),
        at_most(
            "minima-coi-is-rank",
            "000 Prop 2",
            f"at the end points the relaxed COI (gamma0 = {cfg.gamma0:g}) is within "
            f"{cfg.rank_tol:g} of the numerical rank ({ranks}): largest |COI - rank|",
            s["prop2_max_rank_error"],
            cfg.rank_tol,
        ),
        at_most(
            "minima-coi-bar-is-rank",
            "000 Prop 2",
            "and so is the bias-free COI: largest |COI-bar - rank|",
            s["prop2_max_rank_error_nobias"],
            cfg.rank_tol,
        ),
    ]


PRESETS = {
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
