"""`linear/representation-cost` — paper 001, §3, Props 12 and 14, Example 20; paper 002.

    bottlenecklab run linear/representation-cost --preset quick

Closed forms (computed once, at the grid's first depth): the deep linear cost
`R(A; L) = L sum s_i^{2/L}` against its expansion (remainder ~ `L^-2`), the optimal
factorization and its geodesic Grams, Prop 12's identity construction, Example 20's
net and its excess `~ 12 L^{1 - 2 gamma}`. Trained (the grid): bias-free deep linear nets
whose `||theta||^2` must equal the cost of the matrix they learned, with geodesic hidden
Grams and balanced layers. Quick preset: 9/9 pass in about 10 s. Measurements and the
schedule's reasons: `docs/lab-notes/fcnn.md`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from bottlenecklab.experiments._checks import at_most, in_range
from bottlenecklab.experiments._spec import ClaimSpec, Experiment, Outcome, Points, Reads, Ungated
from bottlenecklab.experiments.linear._common import SMOKE, LinearNetConfig
from bottlenecklab.experiments.linear._representation import (
    BALANCE_MAX,
    COST_GAPS,
    EXAMPLE20_F_ERROR,
    EXAMPLE20_NORM_ERROR,
    EXAMPLE20_SLOPE,
    FACTORIZATION_ERRORS,
    GRAM_ERROR_MAX,
    NORM_GAP,
    PROP12_IDENTITY_ERROR,
    PROP12_NORM_ERROR,
    REMAINDER_CONSTANT,
    REMAINDER_CONSTANT_RATIO,
    REMAINDER_SLOPE,
)
from bottlenecklab.measure import Quantity


@dataclass(frozen=True)
class Config(LinearNetConfig):
    """Closed-form checks and trained deep linear networks (`LinearNetConfig`).

    Args:
        depths: depths `L` of the trained networks (the grid).
        singular_values, shape: the closed-form test matrix `A` (`shape = (d_out, d_in)`).
        cost_depths: depths of the remainder study; slope_window: accepted log-log slope;
        constant_tol: relative tolerance of `L^2 remainder` at the largest depth against
            `(4/3) sum (log s)^3`.
        factorization_depth, factorization_width, factorization_tol: the optimal
            factorization check (relative errors of `A`, norm, Grams).
        prop12_k, prop12_d, prop12_depth, prop12_width, prop12_tol: Prop 12.
        gamma, example20_depths, example20_f_tol, example20_slope_tol: Example 20.
        n_check: sample points of the construction checks.
        norm_tol, gram_tol, balance_tol: trained tolerances (relative; the windows of
            their claims' value stability too).
    """

    depths: tuple[int, ...] = (2, 4, 8)
    singular_values: tuple[float, ...] = (3.0, 1.5, 0.4, 0.0)
    shape: tuple[int, int] = (5, 4)
    cost_depths: tuple[int, ...] = (4, 8, 16, 32, 64, 128, 256)
    slope_window: tuple[float, float] = (-2.2, -1.8)
    constant_tol: float = 0.05
    factorization_depth: int = 6
    factorization_width: int = 7
    factorization_tol: float = 1e-10
    prop12_k: int = 2
    prop12_d: int = 5
    prop12_depth: int = 8
    prop12_width: int = 6
    prop12_tol: float = 1e-12
    gamma: float = 0.75
    example20_depths: tuple[int, ...] = (10, 20, 40, 100, 200, 400, 1000, 2000, 4000, 10_000)
    example20_f_tol: float = 1e-9
    example20_slope_tol: float = 0.05
    n_check: int = 200
    norm_tol: float = 0.02
    gram_tol: float = 0.05
    balance_tol: float = 0.05


BASE = Config()  # its tolerances are the trained claims' windows


def closed(pts: Points, *quantities: Quantity) -> float:
    """The largest of the closed-form `quantities` (computed at the grid's first depth,
    `COST_GAPS`; `nan` when no point holds them)."""
    holder = next((p for p in pts if REMAINDER_SLOPE.name in p.scalars), None)
    if holder is None:
        return math.nan
    return max(float(holder.get(q)) for q in quantities)


def worst(quantity: Quantity, bound: str):
    """The largest trained `quantity` over the depths, `<= cfg.<bound>`."""

    def check(cfg: Config, pts: Points) -> Outcome:
        depths = ", ".join(str(L) for L in pts.swept("model.depth"))
        return at_most(max(pts.values(quantity)), getattr(cfg, bound), depths=depths)

    return check


def remainder_constant(cfg: Config, pts: Points) -> Outcome:
    """`L^2 remainder` at the largest depth over `(4/3) sum (log s)^3`, in `1 +- constant_tol`."""
    ratio, tol = closed(pts, REMAINDER_CONSTANT_RATIO), cfg.constant_tol
    const = closed(pts, REMAINDER_CONSTANT)
    return in_range(ratio, 1 - tol, 1 + tol, top=cfg.cost_depths[-1], const=const)


def example20_excess_slope(cfg: Config, pts: Points) -> Outcome:
    """The log-log slope of Example 20's excess, `1 - 2 gamma +- example20_slope_tol`."""
    target, tol = 1 - 2 * cfg.gamma, cfg.example20_slope_tol
    slope = closed(pts, EXAMPLE20_SLOPE)
    return in_range(slope, target - tol, target + tol, target=target, top=cfg.example20_depths[-1])


EXACT = "an exact construction, checked to round-off"
REMAINDER_SLOPE_CLAIM = ClaimSpec(
    "remainder-slope",
    "log-log slope of |R(A;L) - (L R0 + R1 + R2/L)| over L = {cfg.cost_depths[0]}..{top}",
    Ungated("closed form of R(A; L), no network"),
    lambda cfg, pts: in_range(
        closed(pts, REMAINDER_SLOPE), *cfg.slope_window, top=cfg.cost_depths[-1]
    ),
    source="001 §1.1, §3",
)
REMAINDER_CONSTANT_CLAIM = ClaimSpec(
    "remainder-constant",
    "L^2 remainder at L = {top} over (4/3) sum (log s_i)^3 (= {const:.4f})",
    Ungated("closed form of R(A; L), no network"),
    remainder_constant,
)
OPTIMAL_FACTORIZATION = ClaimSpec(
    "optimal-factorization",
    "W_l = U_l S^(1/L) U_(l-1)^T at L = {cfg.factorization_depth}: largest relative error "
    "of the product vs A, of the norm vs L sum s^(2/L), of the hidden Grams vs "
    "X (A^T A)^(l/L) X^T",
    Ungated(EXACT),
    lambda cfg, pts: at_most(closed(pts, *FACTORIZATION_ERRORS), cfg.factorization_tol),
    source="001 Prop 14; 002 'Representation geodesics'",
)
TRAINED_NORM = ClaimSpec(
    "trained-norm",
    "trained linear nets (L = {depths}): largest |1 - ||theta||^2 / L sum s_i(A_theta)^(2/L)|",
    Reads((NORM_GAP,), window=BASE.norm_tol),
    worst(NORM_GAP, "norm_tol"),
)
TRAINED_GRAMS = ClaimSpec(
    "trained-grams",
    "largest relative Frobenius error of a hidden Gram vs X (A_theta^T A_theta)^(l/L) X^T",
    Reads((GRAM_ERROR_MAX,), window=BASE.gram_tol),
    worst(GRAM_ERROR_MAX, "gram_tol"),
    source="002 'Representation geodesics'",
)
TRAINED_BALANCED = ClaimSpec(
    "trained-balanced",
    "largest summed balancedness residual |||W_(l+1)||^2 - ||W_l||^2 - ||b_l||^2| / ||W_(l+1)||^2",
    Reads((BALANCE_MAX,), window=BASE.balance_tol),
    worst(BALANCE_MAX, "balance_tol"),
    source="001 §2",
)
PROP12 = ClaimSpec(
    "prop12",
    "identity on a {cfg.prop12_k}-planar completely positive set at L = "
    "{cfg.prop12_depth}: max(| ||theta||^2 - L k |, max |f(x) - x|)",
    Ungated(EXACT),
    lambda cfg, pts: at_most(closed(pts, PROP12_NORM_ERROR, PROP12_IDENTITY_ERROR), cfg.prop12_tol),
    source="001 Prop 12",
)
EXAMPLE20 = ClaimSpec(
    "example20",
    "largest |f_theta(x) - f(x)| on [0,1]^3 and relative error of the closed-form norm, "
    "over the depths",
    Ungated(EXACT + " (and its closed-form norm)"),
    lambda cfg, pts: at_most(
        closed(pts, EXAMPLE20_F_ERROR, EXAMPLE20_NORM_ERROR), cfg.example20_f_tol
    ),
    source="001 Example 20",
)
EXAMPLE20_EXCESS = ClaimSpec(
    "example20-excess",
    "log-log slope of ||theta||^2 - 3L over L = {cfg.example20_depths[0]}..{top} "
    "(1 - 2 gamma = {target:g})",
    Ungated("the closed-form excess of Example 20's construction, no network"),
    example20_excess_slope,
    source="001 Example 20",
)
CLAIMS = [
    REMAINDER_SLOPE_CLAIM,
    REMAINDER_CONSTANT_CLAIM,
    OPTIMAL_FACTORIZATION,
    TRAINED_NORM,
    TRAINED_GRAMS,
    TRAINED_BALANCED,
    PROP12,
    EXAMPLE20,
    EXAMPLE20_EXCESS,
]


# Presets: only what changes, with the reason.
PRESETS = {
    # Seconds: two depths, short training, few construction depths.
    "smoke": {
        **SMOKE,
        "depths": (2, 3),
        "cost_depths": (4, 16, 64),
        "example20_depths": (10, 100, 1000),
        "n_check": 20,
    },
    # The spec's quick preset (X 64x6, teacher s = (3, 1.5, 0.4), width 8): the base.
    "quick": {},
    # The same at more depths (the closed forms are already at paper scale).
    "paper": {"depths": (2, 3, 4, 6, 8, 12, 16)},
}

EXPERIMENT = Experiment[Config](
    name="linear/representation-cost",
    source="001 §3",
    title="deep linear representation cost: closed form, expansion, constructions, trained nets",
    config=BASE,
    presets=PRESETS,
    grid={"model.depth": "depths"},
    measure=COST_GAPS,
    claims=CLAIMS,
    figures=("_depth_rank:representation_cost",),
    doc=__doc__ or "",
)
