"""`leaky-resnet/hamiltonian-vs-depth` — paper 000, Fig 1a.

    bottlenecklab run leaky-resnet/hamiltonian-vs-depth --preset quick

Leaky ResNets on a teacher of bottleneck rank `k*`: the median over layers of `-(2/L~) H`
approaches `k*` from below as `L~` grows, min COI_gamma from above.

Expected (quick: teacher [20, 5, 20], w = 40, L = 30, L~ = 6 to 24): the claims on the
median are `not-converged` (kinked: stationarity <= 1e-4 needed, the nets reach 0.05-0.23);
`test-error` passes. ~3 min per point, one core. Notes: `docs/lab-notes/leaky-resnet.md`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from bottlenecklab.experiments._checks import (
    at_most,
    interval_in_range,
    listed,
    non_decreasing_below,
    outcome,
    reported,
)
from bottlenecklab.experiments._spec import ClaimSpec, Experiment, Outcome, Points, Reads
from bottlenecklab.experiments.leaky_resnet._common import LAYERS, PaperConfig, presets
from bottlenecklab.measure import COI_GAMMA_MIN, TEST_ERROR
from bottlenecklab.measure._hamiltonian import RANK_H_MEDIAN

LEAK = "model.leak"


@dataclass(frozen=True)
class Config(PaperConfig):
    """Fig 1a at the paper's sizes (`PaperConfig`).

    Args:
        leaks: the effective depths `L~` of the sweep (one trained network each).
        rank_window: `(below, above)`: the median at the largest `L~` lies in
            `[k* - below, k* + above]`, and no median exceeds `k* + above`.
        trend_tolerance: allowed dip between consecutive medians.
        coi_tolerance: allowed amount by which `min COI_gamma` may undercut the median.
        test_error_bound: bound on `C_test / d_out` (none in the paper; 1: the trivial
            predictor). clarke: `H` with the certificate's kink derivatives (`LAYERS`).
    """

    leaks: tuple[float, ...] = (4.0, 8.0, 12.0, 16.0, 20.0, 24.0)
    rank_window: tuple[float, float] = (1.0, 0.5)
    trend_tolerance: float = 0.1
    coi_tolerance: float = 0.25
    test_error_bound: float = 0.5
    clarke: bool = True


BASE = Config()  # its tolerances are the claims' windows (value stability: 1/4 of them)


def spread(cfg: Config, pts: Points) -> Outcome:
    """The median's change over the certification extension at the largest `L~`: the
    estimator's precision (spec, "Estimator spread"; nan without an extension)."""
    top = pts.last
    steps = top.extension.steps if top.extension is not None else math.nan
    return reported(top.change(RANK_H_MEDIAN), top=top.point[LEAK], ext_steps=steps)


def rank_at_largest_leak(cfg: Config, pts: Points) -> Outcome:
    """`[median - spread, median + spread]` at the largest `L~` inside the rank window."""
    k, (below, above) = cfg.task.k_star, cfg.rank_window
    median, s = pts.last.value(RANK_H_MEDIAN), pts.last.change(RANK_H_MEDIAN)
    return interval_in_range(median, s, k - below, k + above, "median", top=pts.last.point[LEAK])


def from_below(cfg: Config, pts: Points) -> Outcome:
    """Medians non-decreasing in `L~` (up to `trend_tolerance`), none above `k* + above`."""
    above, medians = cfg.rank_window[1], pts.values(RANK_H_MEDIAN)
    ceiling, leaks = (cfg.task.k_star + above, f"k* + {above:g}"), listed(pts.swept(LEAK), "g")
    return non_decreasing_below(medians, cfg.trend_tolerance, *ceiling, leaks=leaks)


def coi_from_above(cfg: Config, pts: Points) -> Outcome:
    """min COI_gamma above the median at every `L~` (up to `coi_tolerance`) and, at the
    largest `L~`, in the rank window (alone, the first holds untrained: `vacuity.md`)."""
    k, (below, above) = cfg.task.k_star, cfg.rank_window
    lo, hi, tol = k - below, k + above, cfg.coi_tolerance
    gap = min(c - m for c, m in zip(pts.values(COI_GAMMA_MIN), pts.values(RANK_H_MEDIAN)))
    coi = pts.last.value(COI_GAMMA_MIN)
    return outcome(
        f"gap >= -{tol:g}; min COI_gamma in [{lo:g}, {hi:g}]",
        f"gap {gap:.4g}; min COI_gamma {coi:.4g}",
        math.isfinite(gap) and gap >= -tol and math.isfinite(coi) and lo <= coi <= hi,
        min(gap + tol, coi - lo, hi - coi),
    )


TOP = "at the largest L~ = {top:g}, "
WINDOW = "[k* - {cfg.rank_window[0]:g}, k* + {cfg.rank_window[1]:g}] (k* = {cfg.task.k_star})"
MEDIAN = "the median over layers of -(2/L~)H"
ESTIMATOR_SPREAD = ClaimSpec(
    "estimator-spread",
    TOP + "|change| of " + MEDIAN + " over the certification extension ({ext_steps:.0f} "
    "steps from the final state): the estimator's precision",
    None,
    spread,
)
RANK_AT_LARGEST_LEAK = ClaimSpec(
    "rank-at-largest-leak",
    TOP + MEDIAN + ", +- its estimator-spread, lies within " + WINDOW,
    Reads((RANK_H_MEDIAN,), window=sum(BASE.rank_window), points="last"),
    rank_at_largest_leak,
)
FROM_BELOW = ClaimSpec(
    "from-below",
    "the median -(2/L~)H approaches k* = {cfg.task.k_star} from below: non-decreasing in "
    "L~ ({leaks}) and never above k* + {cfg.rank_window[1]:g}",
    Reads((RANK_H_MEDIAN,), window=BASE.rank_window[1]),
    from_below,
)
COI_FROM_ABOVE = ClaimSpec(
    "coi-from-above",
    "at every L~, min over layers of COI_gamma lies above the median -(2/L~)H (gamma0 = "
    "{cfg.gamma0:g}; the smallest gap over L~), and at the largest L~ it lies in " + WINDOW,
    Reads((COI_GAMMA_MIN, RANK_H_MEDIAN), window=BASE.coi_tolerance),
    coi_from_above,
)
TEST_ERROR_CLAIM = ClaimSpec(
    "test-error",
    "relative test error C_test / d_out, worst over L~",
    Reads((TEST_ERROR,), window=BASE.test_error_bound),
    lambda cfg, pts: at_most(max(pts.values(TEST_ERROR)), cfg.test_error_bound),
)

PRESETS = presets(
    smoke={"model.depth": 6, "model.schedule": "equidistant", "leaks": (1.0, 2.0)},  # seconds
    # rho L~ <= 0.8 up to L~ = 24: the trend from below up to rho L~ = 0.8
    quick={"model.depth": 30, "leaks": (6.0, 12.0, 18.0, 24.0)},
)

EXPERIMENT = Experiment[Config](
    name="leaky-resnet/hamiltonian-vs-depth",
    source="000 Fig 1a",
    title="-(2/L~)H recovers the bottleneck rank k* as the effective depth grows",
    config=BASE,
    presets=PRESETS,
    grid={LEAK: "leaks"},
    measure=LAYERS,
    claims=[ESTIMATOR_SPREAD, RANK_AT_LARGEST_LEAK, FROM_BELOW, COI_FROM_ABOVE, TEST_ERROR_CLAIM],
    figures=("_leaky_resnet:hamiltonian_vs_leak", "_leaky_resnet:layer_portrait"),
    doc=__doc__ or "",
)
