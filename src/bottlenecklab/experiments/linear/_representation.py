"""The measurement of `linear/representation-cost` (papers 001 §3, 002) and the quantities
it writes, declared once (only that experiment reads them, so they live with its area,
not on the `measure` face).

`COST_GAPS` is the experiment's `measure`: on every trained deep linear net the norm gap,
the geodesic Gram errors and the balancedness (`TRAINED`), and at the grid's first depth
only the closed forms (`CLOSED_FORMS`: pure theory, the same at every depth, computed
once; tables `remainder`, `example20`). Claims read them by object:
`point.value(NORM_GAP)`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from bottlenecklab.experiments._spec import Measure, Measurement
from bottlenecklab.measure import DEPTH, Quantity, fcnn_balance_residuals, loglog_slope
from bottlenecklab.measure._linear_net import linear_cost_gap, linear_geodesic_errors
from bottlenecklab.tasks import Dataset
from bottlenecklab.theory import (
    factorization_errors,
    identity_construction,
    linear_cost_expansion,
    linear_cost_remainder_constant,
    linear_cost_remainders,
    non_lipschitz_table,
    relu_network,
)

__all__ = [
    "BALANCE_MAX",
    "CLOSED_FORMS",
    "COST_GAPS",
    "EXAMPLE20_F_ERROR",
    "EXAMPLE20_NORM_ERROR",
    "EXAMPLE20_SLOPE",
    "FACTORIZATION_ERRORS",
    "GRAM_ERROR_MAX",
    "NORM_GAP",
    "PROP12_IDENTITY_ERROR",
    "PROP12_NORM_ERROR",
    "R0",
    "R1",
    "R2",
    "REMAINDER_CONSTANT",
    "REMAINDER_CONSTANT_RATIO",
    "REMAINDER_SLOPE",
    "TRAINED",
    "closed_forms",
    "linear_measurement",
    "test_matrix",
]


def test_matrix(cfg: Any) -> np.ndarray:
    """`A = U diag(s) V^T` of shape `cfg.shape` (Haar `U`, `V`, seed 0), `[d_out, d_in]`."""
    rng = np.random.default_rng(0)
    U, _ = np.linalg.qr(rng.standard_normal((cfg.shape[0], cfg.shape[0])))
    V, _ = np.linalg.qr(rng.standard_normal((cfg.shape[1], cfg.shape[1])))
    S = np.zeros(cfg.shape)
    idx = np.arange(len(cfg.singular_values))
    S[idx, idx] = cfg.singular_values
    return U @ S @ V.T


def closed_forms(cfg: Any) -> tuple[dict[str, float], dict[str, list[dict]]]:
    """The closed-form checks (`CLOSED_FORMS`) and their tables `remainder`, `example20`.

    Args:
        cfg: the experiment's `Config` (the test matrix, the depths and tolerances).
    """
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


def linear_measurement(model: torch.nn.Module, data: Dataset, cfg: Any) -> Measurement:
    """The trained network's cost gap, geodesic errors, balance (`TRAINED`); and, at the
    grid's first depth only, the closed-form checks (`CLOSED_FORMS`, pure theory: the
    same at every depth).

    Args:
        model: a trained bias-free deep linear `FCNN`; data: its data set (`x_train`
            `[N, d_in]`); cfg: the experiment's `Config`.
    """
    scalars, tables = closed_forms(cfg) if model.depth == cfg.depths[0] else ({}, {})
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


_NET = "a trained bias-free deep linear network"
NORM_GAP = Quantity(
    "norm_gap",
    "|||theta||^2 / R(A_theta; L) - 1|, the parameter norm over the deep linear cost of "
    "the learned matrix (paper 001, §3)",
    function=linear_cost_gap,
    over=_NET + " (float64 copy)",
    units="relative",
)
GRAM_ERROR_MAX = Quantity(
    "gram_error_max",
    "largest relative Frobenius error of a hidden Gram vs X (A^T A)^(l/L) X^T (paper 002, "
    "'Representation geodesics')",
    function=linear_geodesic_errors,
    over=_NET + ", its hidden layers on the training inputs",
    units="relative",
)
BALANCE_MAX = Quantity(
    "balance_max",
    "largest summed balancedness residual |||W_(l+1)||^2 - ||W_l||^2 - ||b_l||^2| / "
    "||W_(l+1)||^2 (paper 001, §2)",
    function=fcnn_balance_residuals,
    over=_NET + ", its layers",
    units="relative",
)
TRAINED = (DEPTH, NORM_GAP, GRAM_ERROR_MAX, BALANCE_MAX)

_CLOSED = "the closed forms (no network), computed once at the grid's first depth"


def _closed(name: str, doc: str, units: str = "relative error") -> Quantity:
    return Quantity(name, doc, function=closed_forms, over=_CLOSED, units=units)


R0 = _closed("R0", "R^(0) of the expansion R(A; L) = L R0 + R1 + R2/L + O(L^-2)", "cost units")
R1 = _closed("R1", "R^(1) of the same expansion (paper 001, §3)", "cost units")
R2 = _closed("R2", "R^(2) of the same expansion", "cost units")
REMAINDER_CONSTANT = _closed(
    "remainder_constant", "(4/3) sum (log s_i)^3, the L^-2 remainder's constant", "cost units"
)
REMAINDER_SLOPE = _closed(
    "remainder_slope",
    "log-log slope of |R(A;L) - (L R0 + R1 + R2/L)| over cost_depths (-2 expected)",
    "slope",
)
REMAINDER_CONSTANT_RATIO = _closed(
    "remainder_constant_ratio",
    "L^2 remainder at the largest cost depth over (4/3) sum (log s_i)^3",
    "ratio",
)
FACTORIZATION_ERRORS = tuple(
    _closed(
        f"factorization_{k}_error",
        f"relative error of the optimal factorization's {what} (paper 001, Prop 14)",
    )
    for k, what in (("A", "product vs A"), ("norm", "norm vs L sum s^(2/L)"), ("gram", "Grams"))
)
PROP12_NORM_ERROR = _closed(
    "prop12_norm_error", "| ||theta||^2 - L k | of Prop 12's identity construction", "norm units"
)
PROP12_IDENTITY_ERROR = _closed(
    "prop12_identity_error", "max |f(x) - x| of Prop 12's construction", "output units"
)
EXAMPLE20_F_ERROR = _closed(
    "example20_f_error", "largest |f_theta(x) - f(x)| of Example 20's net", "output units"
)
EXAMPLE20_NORM_ERROR = _closed(
    "example20_norm_error", "largest relative error of Example 20's closed-form norm"
)
EXAMPLE20_SLOPE = _closed(
    "example20_slope",
    "log-log slope of Example 20's excess ||theta||^2 - 3L (1 - 2 gamma expected)",
    "slope",
)
CLOSED_FORMS = (
    R0,
    R1,
    R2,
    REMAINDER_CONSTANT,
    REMAINDER_SLOPE,
    REMAINDER_CONSTANT_RATIO,
    *FACTORIZATION_ERRORS,
    PROP12_NORM_ERROR,
    PROP12_IDENTITY_ERROR,
    EXAMPLE20_F_ERROR,
    EXAMPLE20_NORM_ERROR,
    EXAMPLE20_SLOPE,
)

# Every point holds TRAINED; the first depth's point holds CLOSED_FORMS too (its claims
# are Ungated and read them with `closed`).
COST_GAPS = Measure(linear_measurement, TRAINED)
