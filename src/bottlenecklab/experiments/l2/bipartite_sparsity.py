"""`l2/bipartite-sparsity` — paper 004, Prop 13-14, Remark 23.

    bottlenecklab run l2/bipartite-sparsity --preset quick

Depth-2 bias-free ReLU nets on `X = I_N`, `Y = B_N` (the complete bipartite graph's
`E^T E`), mean cost plus `lam ||theta||^2`, trained (float64) by restarted L-BFGS, then
restarted trust-region Newton, then Newton-KKT on the kink manifold (`kink_newton`, as
`l2/width-plateau-digits`), at widths 4-32 with 4 restarts each. The optimum needs
`N^2/4` neurons, one per cross pair `(e_i + e_j)/sqrt 2`; Remark 23's width-`N` net fits
with `||theta||^2 = N^2 + N` but is not optimal; the wide optimum has
`loss / lam = N^2 - lam N (N - 1)` (derived).
Expected (N = 8): every claim passes, gated as the width plateaus (the restart that sets
each width's best and its near-ties certified). Quick preset: 28 runs, ~4 min CPU.
Pilots and measurements: `docs/lab-notes/l2.md`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bottlenecklab import theory
from bottlenecklab.experiments._checks import at_least, at_most, in_range, listed, non_decreasing
from bottlenecklab.experiments._spec import (
    ClaimSpec,
    Experiment,
    Gate,
    Outcome,
    Points,
    Reads,
    Ungated,
)
from bottlenecklab.experiments.l2._bipartite import (
    BIPARTITE,
    LOSS_OVER_LAM,
    NEURONS,
    PAIRS_COVERED,
    RANK_K1,
    REMARK23_FIT_ERROR,
    REMARK23_NORM,
)
from bottlenecklab.experiments.l2._common import best_rows, width_rows
from bottlenecklab.experiments.l2._plateau import self_gated as plateau_gated
from bottlenecklab.experiments.l2._plateau import unfinished_restarts
from bottlenecklab.measure import NORM_SQ
from bottlenecklab.measure._sparsity import best_per_width, plateau_start
from bottlenecklab.models import FCNNConfig
from bottlenecklab.tasks import BipartiteTask
from bottlenecklab.training import PhaseConfig, TrainConfig


@dataclass(frozen=True)
class Config:
    """The bipartite task at `N = 8` (004 gives no training details; spec quick preset).

    Args:
        widths, seeds: the grid (one L-BFGS run per width and restart).
        wide_tol: `|loss / lam - (N^2 - lam N (N - 1))|` accepted at the largest width.
        trend_tol: relative rise of the best loss allowed between consecutive widths.
        plateau_tol: the plateau's relative tolerance (spec: 1e-4).
        pair_cos: cosine of a merged direction to its pair `(e_i + e_j)/sqrt 2`.
        remark23_tol: accepted error of the Remark 23 fit and norm.
        certify: the convergence certificate (spec `convergence.md`): nonsmooth
            stationarity <= 1e-2 of the regularization force (the spec's default); the
            earlier state is the start of the last phase, a `kink_newton` restart of 10
            steps that re-identifies the kink set.
        train: 40 L-BFGS restarts of 100 steps, 8 trust-region Newton restarts of 200
            (a fresh radius each: one long phase stops where a kink collapses it), then
            `kink_newton` 120 and 10 (a point next to a kink, where L-BFGS settles or not
            by round-off, is solved on its kink manifold). Without the Newton polish some
            restarts at widths 12-16 are still descending after 4000 L-BFGS steps (lab
            notes).
    """

    task: BipartiteTask = BipartiteTask()
    model: FCNNConfig = FCNNConfig(depth=2, width=32, bias_scale=0.0)
    train: TrainConfig = TrainConfig(
        lam=1e-3,
        phases=(PhaseConfig("lbfgs", 100, 1.0),) * 40
        + (PhaseConfig("newton", 200, 1.0),) * 8
        + (PhaseConfig("kink_newton", 120, 1.0), PhaseConfig("kink_newton", 10, 1.0)),
        dtype="float64",
    )
    widths: tuple[int, ...] = (4, 8, 12, 14, 16, 20, 32)
    seeds: tuple[int, ...] = (0, 1, 2, 3)
    wide_tol: float = 1e-3
    trend_tol: float = 1e-4
    plateau_tol: float = 1e-4
    pair_cos: float = 0.99
    remark23_tol: float = 1e-10
    certify: Gate = Gate(threshold=1e-2, tau=1e-6, earlier=0.0)
    seed: int = 0


def best_loss(pts: Points) -> tuple[list[float], list[float], dict[float, dict[str, float]]]:
    """`(widths, best loss / lam, best restart's row)` per width, widths increasing."""
    rows = width_rows(pts)
    widths, best = best_per_width(rows, LOSS_OVER_LAM.name)
    return widths, best, best_rows(rows, LOSS_OVER_LAM)


def remark23(cfg: Config, pts: Points) -> Outcome:
    """Remark 23's net: its fit error and `|norm - (N^2 + N)|`, the larger of the two."""
    p, N = pts[0], cfg.task.N
    err = max(p.value(REMARK23_FIT_ERROR), abs(p.value(REMARK23_NORM) - (N * N + N)))
    return at_most(err, cfg.remark23_tol, n2n=N * N + N)


def wide_optimum(cfg: Config, pts: Points) -> Outcome:
    """`|best loss / lam - (N^2 - lam N (N - 1))|` at the largest width (Prop 13, derived)."""
    widths, _, rows = best_loss(pts)
    top = rows[widths[-1]]
    wide, norm = theory.bipartite_wide_optimum(cfg.task.N, cfg.train.lam)
    facts = {"top": widths[-1], "wide": wide, "norm": top[NORM_SQ.name], "wide_norm": norm}
    return at_most(abs(top[LOSS_OVER_LAM.name] - wide), cfg.wide_tol, **facts)


def width_n(cfg: Config, pts: Points) -> Outcome:
    """The best loss / lam at width `N` lies in `(N^2, N^2 + N]` (Remark 23: not optimal)."""
    N = cfg.task.N
    at_n = best_loss(pts)[2].get(float(N), {}).get(LOSS_OVER_LAM.name, math.nan)
    return in_range(at_n, N * N + 1e-9, N * N + N)


def non_increasing(cfg: Config, pts: Points) -> Outcome:
    """The best loss / lam, widest first, non-decreasing within `trend_tol` relative."""
    widths, best, _ = best_loss(pts)
    return non_decreasing(
        list(reversed(best)), cfg.trend_tol * min(best), widths=listed(widths, "g")
    )


def plateau(cfg: Config, pts: Points) -> Outcome:
    """The plateau starts between `N^2/4` and `N^2/2` (Prop 14)."""
    N = cfg.task.N
    return in_range(plateau_start(*best_loss(pts)[:2], cfg.plateau_tol), N * N / 4, N * N / 2)


def pairs(cfg: Config, pts: Points) -> Outcome:
    """At the largest width the merged directions cover the `N^2/4` cross pairs."""
    widths, _, rows = best_loss(pts)
    top = rows[widths[-1]]
    facts = {"top": widths[-1], "neurons": top[NEURONS.name], "rank": top[RANK_K1.name]}
    return at_least(top[PAIRS_COVERED.name], cfg.task.N**2 / 4, **facts)


def self_gated(read: Reads, check: Callable[[Config, Points], Outcome]) -> Callable:
    """`check`, gated as the width plateaus (`_plateau.plateau_gate`, spec `l2-sparsity.md`,
    fourth review): the claims read each width's best restart, so stationarity is asked
    of the restart that sets it and of every restart within `trend_tol` of it, value
    stability (`read`'s window) of every restart; an unfinished restart far above its
    width's best is reported (`unfinished-restarts`), not gating."""

    def judged(cfg: Config, pts: Points) -> Outcome:
        return plateau_gated(check(cfg, pts), cfg, pts, read, LOSS_OVER_LAM)

    judged.__doc__ = check.__doc__
    return judged


BASE = Config()
GATED_WHY = (
    "gated by the experiment (`_plateau.plateau_gate`, as the width plateaus: the restart "
    "that sets each width's best and every restart within the trend tolerance of it "
    "certified, every restart stable over the claim's window)"
)


def gated(read: Reads, check: Callable[[Config, Points], Outcome]) -> tuple[Ungated, Callable]:
    """A self-gated claim's gate and check: `Ungated` naming what its gate reads (so the
    runner keeps those quantities' earlier values) and `self_gated(read, check)`."""
    return Ungated(GATED_WHY, reads=read), self_gated(read, check)


LOSS_READ = Reads((LOSS_OVER_LAM,), window=BASE.trend_tol, relative=True)
REMARK23 = ClaimSpec(
    "remark23",
    "W_1 = sqrt(N/2) I, W_2 = sqrt(2/N) B_N fits B_N with ||theta||^2 = N^2 + N = "
    "{n2n}: largest error of fit and norm",
    Ungated("a closed-form construction checked at fixed weights (no training)"),
    remark23,
    source="004 Remark 23",
)
WIDE_OPTIMUM = ClaimSpec(
    "wide-optimum",
    "at width {top:g} |best loss / lam - (N^2 - lam N (N-1))| ({wide:.4f}; "
    "||theta||^2 = {norm:.4f} vs {wide_norm:.4f})",
    *gated(Reads((LOSS_OVER_LAM,), window=2 * BASE.wide_tol), wide_optimum),
    source="004 Prop 13 (derived)",
)
WIDTH_N = ClaimSpec(
    "width-N",
    "at width N = {cfg.task.N} the best loss / lam lies in (N^2, N^2 + N] (not optimal)",
    *gated(Reads((LOSS_OVER_LAM,), window=float(BASE.task.N)), width_n),
    source="004 Remark 23",
)
NON_INCREASING = ClaimSpec(
    "non-increasing",
    "best loss / lam is non-increasing in width ({widths}); listed from the widest down",
    *gated(LOSS_READ, non_increasing),
    source="004 Prop 6",
)
PLATEAU = ClaimSpec(
    "plateau",
    "plateau start (first width with best <= (1 + {cfg.plateau_tol:g}) min)",
    *gated(Reads((LOSS_OVER_LAM,), window=BASE.plateau_tol, relative=True), plateau),
    source="004 Prop 14",
)
PAIRS = ClaimSpec(
    "pairs",
    "at width {top:g} the merged incoming directions (cosine > {cfg.pair_cos:g}) cover "
    "the cross pairs ({neurons:g} merged neurons, Rank K_1 = {rank:g})",
    *gated(Reads((PAIRS_COVERED,), window=BASE.task.N**2 / 16), pairs),  # 1/4: one pair
    source="004 Prop 13",
)
UNFINISHED_RESTARTS = ClaimSpec(
    "unfinished-restarts",
    "restarts more than {cfg.trend_tol:g} above their width's best loss that fail "
    "stationarity (not gating): {seeds}",
    LOSS_READ,
    lambda cfg, pts: unfinished_restarts(cfg, pts, LOSS_READ),
)

PRESETS: dict[str, dict[str, Any]] = {
    # Seconds: N = 4, two widths, one seed, few L-BFGS steps (restarted, as in quick).
    "smoke": {
        "task.N": 4,
        "widths": (4, 8),
        "seeds": (0,),
        "train.phases": ({"optimizer": "lbfgs", "steps": 10, "lr": 1.0},) * 3,
        "train.log_every": 10,
    },
    # The spec's quick preset: N = 8, widths 4-32, 4 restarts, L-BFGS (as 40 restarted
    # runs of 100 iterations: one long run stalls), Newton polish, L-BFGS extension.
    "quick": {},
    # 004 gives no sizes: more restarts and steps.
    "paper": {
        "seeds": tuple(range(10)),
        "train.phases": ({"optimizer": "lbfgs", "steps": 100, "lr": 1.0},) * 100
        + ({"optimizer": "newton", "steps": 200, "lr": 1.0},) * 8
        + ({"optimizer": "lbfgs", "steps": 100, "lr": 1.0},),
    },
}

EXPERIMENT = Experiment[Config](
    name="l2/bipartite-sparsity",
    source="004 Prop 13-14",
    title="Bipartite task: N^2/4 neurons at the optimum, width N fits but is not optimal",
    config=BASE,
    presets=PRESETS,
    grid={"model.width": "widths", "seed": "seeds"},
    measure=BIPARTITE,
    claims=[REMARK23, WIDE_OPTIMUM, WIDTH_N, NON_INCREASING, PLATEAU, PAIRS, UNFINISHED_RESTARTS],
    figures=("_l2:l2_width_plateau",),
    doc=__doc__ or "",
)
