"""`leaky-resnet/hamiltonian-flow` — paper 000, §1.5 and §1.2 (no training).

    bottlenecklab run leaky-resnet/hamiltonian-flow --preset quick

Integrates the Hamiltonian system (`theory.vector_field`) from lifted inputs with RK4 at
doubling step counts: `H` is conserved at fourth order on a kink-free path, at first order
on a generic path whose entries cross zero, and to RK4 accuracy when the steps are cut at
the crossings. Also checks the integration-range and output-scaling symmetries of §1.2
(`theory.symmetry_errors`). Tables: `refinement` (per path and step count) and `drift`.

Expected (quick preset): 8/8 claims pass (theory claims, no certificate); ~1 min wall.
Lab notes: `docs/lab-notes/leaky-resnet.md`, `docs/leaky-resnet-theory.md`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bottlenecklab.experiments._checks import at_least, at_most, in_range, unmeasured
from bottlenecklab.experiments._spec import (
    ClaimSpec,
    Experiment,
    Outcome,
    PointResult,
    Points,
    Ungated,
)
from bottlenecklab.experiments.leaky_resnet._flow import (
    FLOW,
    RANGE_NORM_ERROR,
    RANGE_PATH_ERROR,
    SCALING_PATH_ERROR,
)
from bottlenecklab.measure import Quantity, loglog_slope
from bottlenecklab.tasks import TeacherConfig
from bottlenecklab.theory import drift_ratios


@dataclass(frozen=True)
class Config:
    """Shooting and symmetry checks at the paper's sizes (App. B: `N = 1000`, `w = 200`).

    Args:
        task: the inputs `X` (`x_train`); width: `w`; leak: `L~`.
        offset, b_smooth: the kink-free start (`relu(X Pin^T) + offset`, momentum scale).
        b_kinked: momentum scale of the generic path.
        steps_smooth, steps_kinked, steps_located: RK4 step counts (doubling; located).
        order_lo, order_hi: the kink-free drift ratio per doubling (RK4: 16).
        slope_lo, slope_hi: the generic path's log-log drift slope in `h` (first order).
        drift_bound, located_bound: drift bounds, fixed steps (finest) and located.
        stretch, shift: `c` of the range and output-scaling symmetries.
        ode_steps, symmetry_tol: RK4 steps and relative error bound of the symmetries.
    """

    task: TeacherConfig = TeacherConfig(dims=(20, 5, 20), n_train=1000, n_test=1)
    width: int = 200
    leak: float = 2.0
    offset: float = 0.5
    b_smooth: float = 1e-4
    b_kinked: float = 5e-3
    steps_smooth: tuple[int, ...] = (10, 20, 40, 80, 160)
    steps_kinked: tuple[int, ...] = (50, 100, 200, 400, 800, 1600)
    steps_located: int = 25
    located_bound: float = 1e-6
    order_lo: float = 12.0
    order_hi: float = 20.0
    slope_lo: float = 0.6
    slope_hi: float = 1.4
    drift_bound: float = 1e-3
    stretch: float = 3.0
    shift: float = 1.5
    ode_steps: int = 400
    symmetry_tol: float = 1e-6
    seed: int = 0


def _path(result: PointResult, path: str) -> list[dict[str, Any]]:
    rows = [r for r in result.tables.get("refinement", []) if r["path"] == path]
    return sorted(rows, key=lambda r: r["steps"])


Rows = list[dict[str, Any]]


def _refined(check: Callable[[Config, Rows, Rows], Outcome]) -> Callable[[Config, Points], Outcome]:
    """`check(cfg, smooth rows, kinked rows)` with the refinement's facts; not measured
    without two step counts on each path."""

    def checked(cfg: Config, pts: Points) -> Outcome:
        smooth, kinked = _path(pts.last, "smooth"), _path(pts.last, "kinked")
        if len(smooth) < 2 or len(kinked) < 2:
            return unmeasured("no rows", "two step counts per path")
        fmt = ", ".join
        return check(cfg, smooth, kinked).with_facts(
            n0=smooth[-2]["steps"],
            n1=smooth[-1]["steps"],
            sm=fmt(f"{row['drift']:.2e}" for row in smooth),
            kn=fmt(f"{row['drift']:.2e}" for row in kinked),
            crossed=sum(row["crossings"] for row in smooth),
            crossings=fmt(str(c) for c in sorted({int(row["crossings"]) for row in kinked})),
            ratios=fmt(f"{x:.1f}" for x in drift_ratios(smooth)),
            halving=fmt(f"{1 / x:.2f}" if x > 0 else "inf" for x in drift_ratios(kinked)),
            fine=kinked[-1]["steps"],
        )

    return checked


def _kink_free_ratios(smooth: Rows) -> list[float]:
    """The drift ratios per doubling; nan when the path crossed a kink or a ratio is not
    finite (a kink-free claim on a path that crossed a kink is not measured)."""
    ratios = drift_ratios(smooth)
    ok = sum(row["crossings"] for row in smooth) == 0 and all(map(math.isfinite, ratios))
    return ratios if ok else [math.nan]


def first_order(cfg: Config, smooth: Rows, kinked: Rows) -> Outcome:
    """Log-log slope of the generic path's drift against the step `h` (nan without a
    crossing, or with a non-finite or zero drift, which the fit would drop)."""
    h = [1.0 / row["steps"] for row in kinked]
    drifts = [float(row["drift"]) for row in kinked]
    finite = all(math.isfinite(d) and d > 0 for d in drifts)
    crossed = min(int(row["crossings"]) for row in kinked) > 0
    slope = loglog_slope(h, drifts) if finite and crossed else math.nan
    return in_range(slope, cfg.slope_lo, cfg.slope_hi)


def located(cfg: Config, pts: Points) -> Outcome:
    """The drift of the generic path with its crossings located (nan without a crossing:
    located crossings are the point)."""
    rows, kinked = _path(pts.last, "located"), _path(pts.last, "kinked")
    row = rows[-1] if rows else {"steps": cfg.steps_located, "drift": math.nan, "crossings": 0}
    drift = float(row["drift"]) if row["crossings"] > 0 else math.nan
    fixed = kinked[-1]["drift"] if len(kinked) >= 2 and len(_path(pts.last, "smooth")) >= 2 else 0
    return at_most(drift, cfg.located_bound, row=row, fixed=fixed)


def symmetry(quantity: Quantity) -> Callable[[Config, Points], Outcome]:
    """The relative error `quantity` of a symmetry check, at most `symmetry_tol`."""
    return lambda cfg, pts: at_most(pts.last.get(quantity), cfg.symmetry_tol)


ODE = Ungated("an integration of the Hamiltonian system (no trained network to certify)")
RK4_ORDER = ClaimSpec(
    "rk4-order",
    "H is conserved at fourth order on a path that crosses no ReLU kink: drift ratio "
    "of the last doubling ({n0} -> {n1} steps); drifts {sm}; {crossed} sign crossings",
    ODE,
    _refined(lambda cfg, sm, kn: in_range(_kink_free_ratios(sm)[-1], cfg.order_lo, cfg.order_hi)),
)
RK4_EVERY_DOUBLING = ClaimSpec(
    "rk4-every-doubling",
    "and the drift shrinks at least that much at every doubling (fourth order, reached "
    "from above): smallest ratio of ({ratios})",
    ODE,
    _refined(lambda cfg, sm, kn: at_least(min(_kink_free_ratios(sm)), cfg.order_lo)),
)
KINKED_DRIFT = ClaimSpec(
    "kinked-drift",
    "on a generic path ({crossings} sign crossings) the drift of H at the finest step "
    "({fine}); drifts {kn}",
    ODE,
    _refined(lambda cfg, sm, kn: at_most(kn[-1]["drift"], cfg.drift_bound)),
)
KINKED_FIRST_ORDER = ClaimSpec(
    "kinked-first-order",
    "where entries cross zero the drift is first order in the step h: log-log slope "
    "of the drift against h over the refinement (per doubling drift(2n)/drift(n) = "
    "{halving}: 1/2 on average, scattered by the crossings' phases inside the steps)",
    ODE,
    _refined(first_order),
)
KINKED_LOCATED = ClaimSpec(
    "kinked-located",
    "H is conserved across the kinks: the same generic path with its "
    "{row[crossings]} crossings located (steps cut there) at only {row[steps]} steps "
    "has drift (vs {fixed:.2e} with fixed steps at the finest step count)",
    ODE,
    located,
)
RANGE_SYMMETRY = ClaimSpec(
    "range-symmetry",
    "weights W_(q/c)/c on [0, c] with leak L~/c (c = {cfg.stretch:g}) reproduce the "
    "path A_(q/c) (integrated on a grid twice as fine): max relative error",
    ODE,
    symmetry(RANGE_PATH_ERROR),
    source="000 §1.2",
)
RANGE_NORM = ClaimSpec(
    "range-norm",
    "and their parameter norm (Simpson on [0, c]) is the closed-form norm of "
    "W_p = Wa + p Wb on [0, 1] divided by c: relative error",
    ODE,
    symmetry(RANGE_NORM_ERROR),
    source="000 §1.2",
)
OUTPUT_SCALING = ClaimSpec(
    "output-scaling",
    "bias-free weights with leak L~ + c (c = {cfg.shift:g}) give exp(-c p) A_p: max relative error",
    ODE,
    symmetry(SCALING_PATH_ERROR),
    source="000 §1.2",
)
CLAIMS = [
    RK4_ORDER,
    RK4_EVERY_DOUBLING,
    KINKED_DRIFT,
    KINKED_FIRST_ORDER,
    KINKED_LOCATED,
    RANGE_SYMMETRY,
    RANGE_NORM,
    OUTPUT_SCALING,
]


PRESETS = {
    # Seconds: few samples, narrow, coarse steps (claims need not pass: pre-asymptotic).
    "smoke": {
        "task.dims": (6, 2, 6),
        "task.hidden": 16,
        "task.n_train": 12,
        "width": 8,
        "steps_smooth": (5, 10),
        "steps_kinked": (20, 40),
        "steps_located": 10,
        "ode_steps": 50,
    },
    # Seconds: N = 100, w = 30, RK4 in its asymptotic regime.
    "quick": {"task.n_train": 100, "width": 30},
    # The paper's sizes (App. B): the base config.
    "paper": {},
}

EXPERIMENT = Experiment[Config](
    name="leaky-resnet/hamiltonian-flow",
    source="000 §1.5",
    title="H is conserved along integrated geodesics; the two symmetries of §1.2 hold",
    config=Config(),
    presets=PRESETS,
    grid={},
    measure=FLOW,
    claims=CLAIMS,
    figures=("_leaky_resnet_theory:hamiltonian_flow",),
    trains=False,
    doc=__doc__ or "",
)
