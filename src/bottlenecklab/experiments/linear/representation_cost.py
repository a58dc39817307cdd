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

import numpy as np
import torch

from bottlenecklab.experiments._checks import at_most, in_range
from bottlenecklab.experiments._spec import (
    ClaimSpec,
    Experiment,
    Measurement,
    Outcome,
    Points,
    Reads,
    Ungated,
)
from bottlenecklab.experiments.linear._common import SMOKE, LinearNetConfig
from bottlenecklab.measure import (
    fcnn_balance_residuals,
    linear_cost_gap,
    linear_geodesic_errors,
    loglog_slope,
)
from bottlenecklab.theory import (
    factorization_errors,
    identity_construction,
    linear_cost_expansion,
    linear_cost_remainder_constant,
    linear_cost_remainders,
    non_lipschitz_table,
    relu_network,
)


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


def test_matrix(cfg: Config) -> np.ndarray:
    """`A = U diag(s) V^T` of shape `cfg.shape` (Haar `U`, `V`, seed 0)."""
    rng = np.random.default_rng(0)
    U, _ = np.linalg.qr(rng.standard_normal((cfg.shape[0], cfg.shape[0])))
    V, _ = np.linalg.qr(rng.standard_normal((cfg.shape[1], cfg.shape[1])))
    S = np.zeros(cfg.shape)
    idx = np.arange(len(cfg.singular_values))
    S[idx, idx] = cfg.singular_values
    return U @ S @ V.T


def _closed_forms(cfg: Config) -> tuple[dict[str, float], dict[str, list[dict]]]:
    A = test_matrix(cfg)
    r0, r1, r2 = linear_cost_expansion(A)
    const = linear_cost_remainder_constant(A)
    rows = linear_cost_remainders(A, cfg.cost_depths)
    top = rows[-1]
    X = np.random.default_rng(1).standard_normal((16, cfg.shape[1]))
    fac = factorization_errors(A, X, cfg.factorization_depth, cfg.factorization_width, seed=2)
    c = identity_construction(
        cfg.prop12_k, cfg.prop12_d, cfg.prop12_depth, cfg.prop12_width, seed=3
    )
    Xo = c.sample(cfg.n_check, seed=4)
    Xc = np.random.default_rng(5).uniform(0, 1, (cfg.n_check, 3))
    ex_rows = non_lipschitz_table(cfg.example20_depths, cfg.gamma, Xc)
    scalars = {
        "R0": r0,
        "R1": r1,
        "R2": r2,
        "remainder_constant": const,
        "remainder_slope": loglog_slope(
            [r["depth"] for r in rows], [abs(r["remainder"]) for r in rows]
        ),
        "remainder_constant_ratio": top["depth"] ** 2 * top["remainder"] / const,
        **{f"factorization_{k}_error": v for k, v in fac.items()},
        "prop12_norm_error": abs(c.norm_sq() - cfg.prop12_depth * cfg.prop12_k),
        "prop12_identity_error": float(np.abs(relu_network(c.weights, Xo) - Xo).max()),
        "example20_f_error": max(r["f_error"] for r in ex_rows),
        "example20_norm_error": max(abs(r["norm_sum"] / r["norm_closed"] - 1.0) for r in ex_rows),
        "example20_slope": loglog_slope(
            [r["depth"] for r in ex_rows], [r["excess"] for r in ex_rows]
        ),
    }
    return scalars, {"remainder": rows, "example20": ex_rows}


def measure(model: torch.nn.Module, data, cfg: Config) -> Measurement:
    """The trained network's cost gap, geodesic errors, balance; and, at the grid's first
    depth only, the closed-form checks (pure theory: the same at every depth)."""
    scalars, tables = _closed_forms(cfg) if model.depth == cfg.depths[0] else ({}, {})
    gram = linear_geodesic_errors(model, data.x_train)
    balance = fcnn_balance_residuals(model)["summed"]
    scalars.update(
        {
            "depth": float(model.depth),
            "norm_gap": abs(linear_cost_gap(model)),
            "gram_error_max": float(gram.max()) if gram.size else 0.0,
            "balance_max": float(balance.max()) if balance.size else 0.0,
        }
    )
    layers = [{"layer": float(l), "gram_error": float(e)} for l, e in enumerate(gram, start=1)]
    return Measurement(scalars=scalars, layers=layers, tables=tables)


def closed(pts: Points, *keys: str) -> float:
    """The largest of the closed-form scalars `keys` (computed at the grid's first depth,
    `measure`; `nan` when no point holds them)."""
    s = next((p.scalars for p in pts if "remainder_slope" in p.scalars), {})
    return max(float(s.get(k, math.nan)) for k in keys)


def worst(name: str, bound: str):
    """The largest trained scalar `name` over the depths, `<= cfg.<bound>`."""

    def check(cfg: Config, pts: Points) -> Outcome:
        depths = ", ".join(str(L) for L in pts.swept("model.depth"))
        return at_most(max(pts.values(name)), getattr(cfg, bound), depths=depths)

    return check


def remainder_constant(cfg: Config, pts: Points) -> Outcome:
    """`L^2 remainder` at the largest depth over `(4/3) sum (log s)^3`, in `1 +- constant_tol`."""
    ratio, tol = closed(pts, "remainder_constant_ratio"), cfg.constant_tol
    const = closed(pts, "remainder_constant")
    return in_range(ratio, 1 - tol, 1 + tol, top=cfg.cost_depths[-1], const=const)


def example20_excess_slope(cfg: Config, pts: Points) -> Outcome:
    """The log-log slope of Example 20's excess, `1 - 2 gamma +- example20_slope_tol`."""
    target, tol = 1 - 2 * cfg.gamma, cfg.example20_slope_tol
    slope = closed(pts, "example20_slope")
    return in_range(slope, target - tol, target + tol, target=target, top=cfg.example20_depths[-1])


EXACT = "an exact construction, checked to round-off"
CLAIMS = [
    ClaimSpec(
        "remainder-slope",
        "log-log slope of |R(A;L) - (L R0 + R1 + R2/L)| over L = {cfg.cost_depths[0]}..{top}",
        Ungated("closed form of R(A; L), no network"),
        lambda cfg, pts: in_range(
            closed(pts, "remainder_slope"), *cfg.slope_window, top=cfg.cost_depths[-1]
        ),
        source="001 §1.1, §3",
    ),
    ClaimSpec(
        "remainder-constant",
        "L^2 remainder at L = {top} over (4/3) sum (log s_i)^3 (= {const:.4f})",
        Ungated("closed form of R(A; L), no network"),
        remainder_constant,
    ),
    ClaimSpec(
        "optimal-factorization",
        "W_l = U_l S^(1/L) U_(l-1)^T at L = {cfg.factorization_depth}: largest relative error "
        "of the product vs A, of the norm vs L sum s^(2/L), of the hidden Grams vs "
        "X (A^T A)^(l/L) X^T",
        Ungated(EXACT),
        lambda cfg, pts: at_most(
            closed(pts, *(f"factorization_{k}_error" for k in ("A", "norm", "gram"))),
            cfg.factorization_tol,
        ),
        source="001 Prop 14; 002 'Representation geodesics'",
    ),
    ClaimSpec(
        "trained-norm",
        "trained linear nets (L = {depths}): largest |1 - ||theta||^2 / L sum s_i(A_theta)^(2/L)|",
        Reads(("norm_gap",), window=BASE.norm_tol),
        worst("norm_gap", "norm_tol"),
    ),
    ClaimSpec(
        "trained-grams",
        "largest relative Frobenius error of a hidden Gram vs X (A_theta^T A_theta)^(l/L) X^T",
        Reads(("gram_error_max",), window=BASE.gram_tol),
        worst("gram_error_max", "gram_tol"),
        source="002 'Representation geodesics'",
    ),
    ClaimSpec(
        "trained-balanced",
        "largest summed balancedness residual |||W_(l+1)||^2 - ||W_l||^2 - ||b_l||^2| / "
        "||W_(l+1)||^2",
        Reads(("balance_max",), window=BASE.balance_tol),
        worst("balance_max", "balance_tol"),
        source="001 §2",
    ),
    ClaimSpec(
        "prop12",
        "identity on a {cfg.prop12_k}-planar completely positive set at L = "
        "{cfg.prop12_depth}: max(| ||theta||^2 - L k |, max |f(x) - x|)",
        Ungated(EXACT),
        lambda cfg, pts: at_most(
            closed(pts, "prop12_norm_error", "prop12_identity_error"), cfg.prop12_tol
        ),
        source="001 Prop 12",
    ),
    ClaimSpec(
        "example20",
        "largest |f_theta(x) - f(x)| on [0,1]^3 and relative error of the closed-form norm, "
        "over the depths",
        Ungated(EXACT + " (and its closed-form norm)"),
        lambda cfg, pts: at_most(
            closed(pts, "example20_f_error", "example20_norm_error"), cfg.example20_f_tol
        ),
        source="001 Example 20",
    ),
    ClaimSpec(
        "example20-excess",
        "log-log slope of ||theta||^2 - 3L over L = {cfg.example20_depths[0]}..{top} "
        "(1 - 2 gamma = {target:g})",
        Ungated("the closed-form excess of Example 20's construction, no network"),
        example20_excess_slope,
        source="001 Example 20",
    ),
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
    measure=measure,
    claims=CLAIMS,
    figures=("_depth_rank:representation_cost",),
    doc=__doc__ or "",
)
